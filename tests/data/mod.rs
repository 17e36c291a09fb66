//! `k6/data`'s SharedArray, end to end: made once from a file, read by several VUs.

use crate::{metric, run_export, Dir};

#[test]
fn shared_array_is_made_once_and_read_by_every_vu() {
    let dir = Dir::new("shared-array");
    let users: Vec<_> = (0..200)
        .map(|i| serde_json::json!({"id": i, "name": format!("user{i}"), "tags": [i % 3, "t"]}))
        .collect();
    dir.write("users.json", &serde_json::to_string(&users).unwrap());
    let script = r#"
import { SharedArray } from 'k6/data';
import { check } from 'k6';
import exec from 'k6/execution';
export const options = { vus: 4, iterations: 40 };
const users = new SharedArray('users', function () {
  console.log('loading users');
  return JSON.parse(open('./users.json'));
});
export default function () {
  const i = (exec.scenario.iterationInTest * 7) % users.length;
  const u = users[i];
  check(u, {
    'element by index': (u) => u.id === i && u.name === `user${i}` && u.tags[0] === i % 3,
    'length': () => users.length === 200,
    'frozen copy': (u) => Object.isFrozen(u) && Object.isFrozen(u.tags) && users[i] !== u,
    'iteration': () => { let n = 0; for (const x of users) n += x.id; return n === 199 * 100; },
    'array methods': () => users.filter((x) => x.tags[0] === 0).length === 67
      && users.map((x) => x.id).slice(-1)[0] === 199 && users.find((x) => x.name === 'user5').id === 5,
  });
  let threw = '';
  try { users[0] = null; } catch (e) { threw = String(e); }
  check(threw, { 'writes throw': (t) => t === 'TypeError: SharedArray is immutable' });
  let late = '';
  try { new SharedArray('late', () => [1]); } catch (e) { late = e.message; }
  check(late, { 'init context only': (m) => m === 'new SharedArray must be called in the init context' });
}
"#;
    let (run, export) = run_export(&dir, script, &[]);
    run.assert_code(0);
    let checks = metric(&export, "checks");
    assert_eq!(
        (checks["passes"].as_f64(), checks["fails"].as_f64()),
        (Some(280.0), Some(0.0)),
        "checks: {}\n{}",
        export["root_group"]["checks"],
        run.stderr
    );
    // The function ran in the first init context only (k6 too: the options pass), not
    // once per VU or in the setup/teardown VU.
    assert_eq!(
        run.stderr.matches("loading users").count(),
        1,
        "{}",
        run.stderr
    );
}
