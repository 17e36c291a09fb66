//! JSON text to JS values: a lean `JSON.parse` (also behind `res.json()`) and the path
//! selector of `res.json(selector)`.

pub(crate) mod parse;
pub(crate) mod path;
