import { nope } from './lib.js';
export default function () {}
