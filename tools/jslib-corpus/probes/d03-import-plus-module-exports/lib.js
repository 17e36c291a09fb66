import { sleep } from 'k6';
module.exports = { s: sleep };
