// k6-utils helpers with checks that hold whatever the random draws.
import { check } from 'k6';
import {
  randomString, uuidv4, randomIntBetween, randomItem, findBetween, normalDistributionStages, parseDuration,
} from 'https://jslib.k6.io/k6-utils/1.6.0/index.js';
import * as old from 'https://jslib.k6.io/k6-utils/1.2.0/index.js';

export const options = { iterations: 5, thresholds: { checks: ['rate==1'] } };

export default function () {
  const s = randomString(12);
  const hex = randomString(8, 'abcdef0123456789');
  const n = randomIntBetween(3, 7);
  const html = '<a>one</a><b>x</b><a>two</a>';
  check(null, {
    'randomString length': () => s.length === 12 && /^[a-z]+$/.test(s),
    'randomString charset': () => /^[a-f0-9]{8}$/.test(hex),
    'uuidv4 shape': () => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(uuidv4()),
    'uuidv4 unique': () => uuidv4() !== uuidv4(),
    'randomIntBetween range': () => Number.isInteger(n) && n >= 3 && n <= 7,
    'randomItem member': () => ['a', 'b', 'c'].includes(randomItem(['a', 'b', 'c'])),
    'findBetween first': () => findBetween(html, '<a>', '</a>') === 'one',
    'findBetween repeat': () => findBetween(html, '<a>', '</a>', true).join() === 'one,two',
    'findBetween missing': () => findBetween(html, '<c>', '</c>') === null || findBetween(html, '<c>', '</c>') === '',
    'normalDistributionStages': () => JSON.stringify(normalDistributionStages(10, 60, 5)),
    'parseDuration': () => parseDuration('1m30s') === 90000 || parseDuration('1m30s') === 90,
    'old version too': () => old.randomString(4).length === 4 && old.randomIntBetween(1, 1) === 1,
  });
}

export function handleSummary(data) {
  // The stage plan is deterministic: both tools must print the same one.
  return {
    'stages.json': JSON.stringify(normalDistributionStages(10, 60, 5)),
    'checks.json': JSON.stringify(data.root_group.checks.map((c) => [c.name, c.passes, c.fails])),
  };
}
