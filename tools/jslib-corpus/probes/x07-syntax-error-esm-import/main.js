import { a } from './lib.js';
export default function () {}
