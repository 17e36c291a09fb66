//! The subset of gjson path syntax that `Response.json(selector)` accepts: dot-separated keys,
//! numeric array indexes, `#` for an array's length, and `\.` to escape a dot in a key.

use serde_json::Value;

/// Selects `path` inside `root`; `None` when nothing matches (k6 returns `undefined`).
pub(crate) fn select<'a>(root: &'a Value, path: &str) -> Option<std::borrow::Cow<'a, Value>> {
    let mut current = root;
    let parts = split(path);
    for (i, part) in parts.iter().enumerate() {
        match current {
            Value::Array(items) if part == "#" && i == parts.len() - 1 => {
                return Some(std::borrow::Cow::Owned(Value::from(items.len())));
            }
            Value::Array(items) => current = items.get(part.parse::<usize>().ok()?)?,
            Value::Object(map) => current = map.get(part.as_str())?,
            _ => return None,
        }
    }
    Some(std::borrow::Cow::Borrowed(current))
}

fn split(path: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    parts.last_mut().expect("non-empty").push(n);
                }
            }
            '.' => parts.push(String::new()),
            c => parts.last_mut().expect("non-empty").push(c),
        }
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selects_like_gjson() {
        let v = json!({"hello": "world", "a": {"items": [1, 2, {"x": true}]}, "dot.key": 5});
        assert_eq!(select(&v, "hello").unwrap().as_ref(), &json!("world"));
        assert_eq!(select(&v, "a.items.1").unwrap().as_ref(), &json!(2));
        assert_eq!(select(&v, "a.items.2.x").unwrap().as_ref(), &json!(true));
        assert_eq!(select(&v, "a.items.#").unwrap().as_ref(), &json!(3));
        assert_eq!(select(&v, "dot\\.key").unwrap().as_ref(), &json!(5));
        assert!(select(&v, "nope").is_none());
        assert!(select(&v, "a.items.9").is_none());
    }
}
