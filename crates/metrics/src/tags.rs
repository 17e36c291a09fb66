//! Immutable, cheaply cloned tag sets.

use std::sync::Arc;

/// The system tags k6 puts on samples by default, sorted (the CSV output's tag columns,
/// `k6 inspect`'s `systemTags`).
pub const DEFAULT_SYSTEM_TAGS: [&str; 14] = [
    "check",
    "error",
    "error_code",
    "expected_response",
    "group",
    "method",
    "name",
    "proto",
    "scenario",
    "service",
    "status",
    "subproto",
    "tls_version",
    "url",
];

/// System tags k6 adds only when `systemTags` asks for them.
pub const OPT_IN_SYSTEM_TAGS: [&str; 4] = ["vu", "iter", "ip", "ocsp_status"];

/// Tags of a sample: sorted by key, keys unique. Cloning bumps a reference count, so
/// a VU builds a set once and reuses it for every sample of a request.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TagSet(Arc<[(Box<str>, Box<str>)]>);

impl TagSet {
    /// Builds a set from key/value pairs; for a repeated key the later value wins.
    pub fn from_pairs<K: Into<Box<str>>, V: Into<Box<str>>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut v: Vec<(Box<str>, Box<str>)> = pairs
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        // A stable sort keeps equal keys in input order, so keeping the last of each
        // run implements "later duplicates win".
        v.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out: Vec<(Box<str>, Box<str>)> = Vec::with_capacity(v.len());
        for pair in v {
            match out.last_mut() {
                Some(last) if last.0 == pair.0 => *last = pair,
                _ => out.push(pair),
            }
        }
        TagSet(out.into())
    }

    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        // A set holds a dozen tags or so: a scan (slice equality compares lengths before
        // bytes) costs less than a binary search whose every probe calls memcmp (~330
        // instructions a lookup, four lookups per request on the metrics thread).
        self.0
            .iter()
            .find(|(k, _)| k.as_ref() == key)
            .map(|(_, v)| v.as_ref())
    }

    /// Whether both are the same shared set (a cheap test that implies equality).
    pub fn same(&self, other: &TagSet) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Whether every `(key, value)` of `selector` is present with that value.
    pub fn contains_all<'a>(&self, selector: impl IntoIterator<Item = (&'a str, &'a str)>) -> bool {
        selector.into_iter().all(|(k, v)| self.get(k) == Some(v))
    }

    /// The pairs in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v.as_ref()))
    }

    /// Number of tags.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are no tags.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A new set with `key` set to `value` (replacing any previous value).
    pub fn with(&self, key: &str, value: &str) -> TagSet {
        TagSet::from_pairs(
            self.iter()
                .filter(|(k, _)| *k != key)
                .chain(std::iter::once((key, value))),
        )
    }
}

impl<K: Into<Box<str>>, V: Into<Box<str>>> FromIterator<(K, V)> for TagSet {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        TagSet::from_pairs(iter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_unique_later_wins() {
        let t = TagSet::from_pairs([("b", "1"), ("a", "2"), ("b", "3"), ("c", "4"), ("a", "5")]);
        let pairs: Vec<_> = t.iter().collect();
        assert_eq!(pairs, vec![("a", "5"), ("b", "3"), ("c", "4")]);
        assert_eq!(t.len(), 3);
        assert_eq!(t.get("b"), Some("3"));
        assert_eq!(t.get("z"), None);
    }

    #[test]
    fn empty_and_equality() {
        let e = TagSet::default();
        assert!(e.is_empty());
        assert_eq!(e.get("a"), None);
        let x = TagSet::from_pairs([("k", "v"), ("j", "w")]);
        let y = TagSet::from_pairs(vec![
            ("j".to_string(), "w".to_string()),
            ("k".into(), "v".into()),
        ]);
        assert_eq!(x, y);
        assert_eq!(TagSet::from_pairs(Vec::<(&str, &str)>::new()), e);
    }

    #[test]
    fn contains_all_and_with() {
        let t = TagSet::from_pairs([("status", "200"), ("group", "::g")]);
        assert!(t.contains_all([("status", "200")]));
        assert!(t.contains_all([]));
        assert!(!t.contains_all([("status", "404")]));
        assert!(!t.contains_all([("status", "200"), ("name", "x")]));
        let u = t.with("status", "500").with("name", "n");
        assert_eq!(u.get("status"), Some("500"));
        assert_eq!(u.len(), 3);
        assert_eq!(t.get("status"), Some("200"), "original is unchanged");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn pairs() -> impl Strategy<Value = Vec<(String, String)>> {
        prop::collection::vec(("[a-c]{0,2}", "\\PC{0,3}"), 0..8)
    }

    proptest! {
        #![proptest_config(crate::prop_config(4000))]

        /// A set is a map where the later duplicate wins (the model: a BTreeMap filled in
        /// order), in key order.
        #[test]
        fn set_is_last_wins_map(p in pairs()) {
            let set = TagSet::from_pairs(p.clone());
            let model: BTreeMap<String, String> = p.into_iter().collect();
            let got: Vec<(&str, &str)> = set.iter().collect();
            let want: Vec<(&str, &str)> = model.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            prop_assert_eq!(got, want);
            for (k, v) in &model {
                prop_assert_eq!(set.get(k), Some(v.as_str()));
            }
            prop_assert_eq!(set.len(), model.len());
        }

        /// `with` is an insert into the model; the selector test is map inclusion.
        #[test]
        fn with_and_selectors(p in pairs(), k in "[a-c]{0,2}", v in "\\PC{0,3}", sel in pairs()) {
            let set = TagSet::from_pairs(p.clone());
            let mut model: BTreeMap<String, String> = p.into_iter().collect();
            let included = sel.iter().all(|(k, v)| model.get(k) == Some(v));
            prop_assert_eq!(set.contains_all(sel.iter().map(|(k, v)| (k.as_str(), v.as_str()))), included);
            model.insert(k.clone(), v.clone());
            prop_assert_eq!(set.with(&k, &v), TagSet::from_pairs(model));
        }
    }
}
