// A data-driven test: users read once per test from a CSV file with k6/experimental/fs and
// k6/experimental/csv, and shared read-only by every VU (one copy of the file in memory).
//
//   BASE_URL=http://127.0.0.1:8080 rk6 run examples/data-driven.js
import http from 'k6/http';
import { check } from 'k6';
import exec from 'k6/execution';
import { open } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';

const BASE = __ENV.BASE_URL || 'http://127.0.0.1:8080';

// Every record as an object keyed by the header row, in a SharedArray.
const users = await csv.parse(await open('./data/users.csv'), { asObjects: true });

// The same file read one record at a time (here: the cities, for a second request).
const cities = [];
const parser = new csv.Parser(await open('./data/users.csv'), { skipFirstLine: true });
for (let r = await parser.next(); !r.done; r = await parser.next()) {
  cities.push(r.value[2]);
}

export const options = {
  vus: 2,
  iterations: 8,
  thresholds: { checks: ['rate==1'] },
};

export default function () {
  const i = exec.scenario.iterationInTest % users.length;
  const user = users[i];
  const res = http.post(`${BASE}/api/login`, JSON.stringify({ username: user.username, password: user.password }), {
    headers: { 'Content-Type': 'application/json' },
  });
  check(res, { 'login answered': (r) => r.status !== 0 });
  check(user, {
    'record has every column': (u) => u.username && u.password && u.city,
    'parser and parse agree': (u) => cities[i] === u.city,
  });
}
