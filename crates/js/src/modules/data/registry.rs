//! The run-wide store behind `SharedArray`: each named array is serialised once per run and
//! every VU (on any thread) reads the same bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Why an array could not be stored.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    /// The text given is not a JSON array.
    #[error("the SharedArray data is not a JSON array: {0}")]
    NotAnArray(#[from] serde_json::Error),
}

/// One shared array: the compact JSON text of the whole array and where each element's
/// text lies in it. Keeping text (as k6 does) costs about the size of the JSON; a parsed
/// `serde_json::Value` tree costs several times that (see bench/README.md).
#[derive(Debug)]
pub(crate) struct SharedData {
    text: Box<str>,
    spans: Box<[(usize, usize)]>,
}

impl SharedData {
    /// Takes the JSON text of an array (what `JSON.stringify` returns).
    pub(crate) fn from_json_array(text: String) -> Result<SharedData, StoreError> {
        // Validate first (without building anything), so the scan below may trust it.
        let _: Vec<serde::de::IgnoredAny> = serde_json::from_str(&text)?;
        let spans = element_spans(&text).into_boxed_slice();
        Ok(SharedData {
            text: text.into_boxed_str(),
            spans,
        })
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// The JSON text of element `i`.
    pub(crate) fn element(&self, i: usize) -> Option<&str> {
        let &(start, end) = self.spans.get(i)?;
        self.text.get(start..end)
    }
}

/// Byte ranges of the top-level elements of a valid JSON array, whitespace trimmed.
fn element_spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    let mut start = None;
    let push = |start: Option<usize>, end: usize, spans: &mut Vec<(usize, usize)>| {
        if let Some(s) = start {
            let item = text[s..end].trim_end();
            spans.push((s, s + item.len()));
        }
    };
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'[' | b'{' => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
                depth += 1;
            }
            b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    push(start.take(), i, &mut spans);
                }
            }
            b',' if depth == 1 => push(start.take(), i, &mut spans),
            b' ' | b'\t' | b'\n' | b'\r' => {}
            _ => {
                if depth == 1 && start.is_none() {
                    start = Some(i);
                }
                in_string = b == b'"';
            }
        }
    }
    spans
}

type Slot = Arc<Mutex<Option<Arc<SharedData>>>>;

/// One run's shared arrays by name (kept in the run's `Shared`).
#[derive(Default)]
pub(crate) struct SharedArrays(Mutex<HashMap<String, Slot>>);

impl SharedArrays {
    /// The array stored under `name`, made by `make` if this is the first request for it.
    /// Other threads asking for the same name wait until `make` finished, so it runs once
    /// per run; if it fails, the next request tries again.
    pub(crate) fn get_or_make<E>(
        &self,
        name: &str,
        make: impl FnOnce() -> Result<SharedData, E>,
    ) -> Result<Arc<SharedData>, E> {
        let slot = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(name.to_string())
            .or_default()
            .clone();
        let mut slot = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(data) = &*slot {
            return Ok(data.clone());
        }
        let data = Arc::new(make()?);
        *slot = Some(data.clone());
        Ok(data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_elements_of_compact_json() {
        let d = SharedData::from_json_array(r#"[1,"a,b",{"x":[1,2]},null,[]]"#.into()).unwrap();
        assert_eq!(d.len(), 5);
        let all: Vec<_> = (0..5).map(|i| d.element(i).unwrap()).collect();
        assert_eq!(all, ["1", "\"a,b\"", r#"{"x":[1,2]}"#, "null", "[]"]);
        assert_eq!(d.element(5), None);
    }

    #[test]
    fn splits_around_whitespace_escapes_and_nesting() {
        let d = SharedData::from_json_array(
            " [ \"a\\\"],\" , {\"k\": \"}\"} ,[[1],[2]], -1.5e3 ,true ] ".into(),
        )
        .unwrap();
        let all: Vec<_> = (0..d.len()).map(|i| d.element(i).unwrap()).collect();
        assert_eq!(
            all,
            [
                "\"a\\\"],\"",
                "{\"k\": \"}\"}",
                "[[1],[2]]",
                "-1.5e3",
                "true"
            ]
        );
        assert_eq!(SharedData::from_json_array("[]".into()).unwrap().len(), 0);
    }

    #[test]
    fn rejects_non_arrays() {
        assert!(SharedData::from_json_array(r#"{"a":1}"#.into()).is_err());
        assert!(SharedData::from_json_array("[1,".into()).is_err());
    }

    #[test]
    fn makes_once_per_name() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let make = || {
            calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            SharedData::from_json_array("[1]".into())
        };
        let arrays = SharedArrays::default();
        let a = arrays.get_or_make("registry-test-once", make).unwrap();
        let b = arrays.get_or_make("registry-test-once", make).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn a_failed_make_is_retried() {
        let arrays = SharedArrays::default();
        let failed: Result<_, &str> = arrays.get_or_make("registry-test-retry", || Err("boom"));
        assert_eq!(failed.unwrap_err(), "boom");
        let ok = arrays
            .get_or_make::<StoreError>("registry-test-retry", || {
                SharedData::from_json_array("[2]".into())
            })
            .unwrap();
        assert_eq!(ok.element(0), Some("2"));
    }
}
