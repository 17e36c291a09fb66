import { a } from './nope.js';
export default function () {}
