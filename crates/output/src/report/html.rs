//! The page around the data: inline CSS, the JSON and the inline script that draws it.
//! Nothing is loaded from the network, so the file renders offline.

/// Opens the element holding the report's JSON.
pub(crate) const DATA_OPEN: &str = r#"<script type="application/json" id="report-data">"#;

const CSS: &str = include_str!("assets/report.css");
const JS: &str = include_str!("assets/report.js");

/// Marks the live page: the script then follows the feed at this (relative) address.
const LIVE_ATTR: &str = " data-live=\"events\"";

/// The whole HTML document for `json` (the serialized report data).
pub(crate) fn page(json: &str) -> String {
    document(json, "rk6 report", "")
}

/// The live dashboard's page (served at `/ui/`): the report's document, whose script
/// redraws it from each `report` event of `/ui/events`.
pub(crate) fn live_page(json: &str) -> String {
    document(json, "rk6 dashboard", LIVE_ATTR)
}

fn document(json: &str, title: &str, app_attr: &str) -> String {
    let json = escape_json(json);
    let mut out = String::with_capacity(CSS.len() + JS.len() + json.len() + 1024);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>");
    out.push_str(title);
    out.push_str("</title>\n<style>\n");
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n<div id=\"app\"");
    out.push_str(app_attr);
    out.push_str("><noscript>This report draws its charts with JavaScript.</noscript></div>\n");
    out.push_str(DATA_OPEN);
    out.push_str(&json);
    out.push_str("</script>\n<script>\n");
    out.push_str(JS);
    out.push_str("</script>\n</body>\n</html>\n");
    out
}

/// Makes JSON safe inside a `<script>` element: `<` only occurs inside JSON strings, where
/// `\u003c` means the same, and without it no `</script>` or `<!--` can end the element.
fn escape_json(json: &str) -> String {
    json.replace('<', "\\u003c")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_cannot_break_out_of_its_element() {
        let json = serde_json::json!({"name": "</script><!--<script>x"}).to_string();
        let page = page(&json);
        let start = page.find(DATA_OPEN).unwrap() + DATA_OPEN.len();
        let end = start + page[start..].find("</script>").unwrap();
        let back: serde_json::Value = serde_json::from_str(&page[start..end]).unwrap();
        assert_eq!(back["name"], "</script><!--<script>x");
    }

    #[test]
    fn page_is_self_contained() {
        let page = page("{}");
        for needle in ["src=", "href=", "@import", "url(", "http://", "https://"] {
            assert!(!page.contains(needle), "{needle} in the page");
        }
        assert!(page.contains("<title>rk6 report</title>"));
        assert!(
            page.contains("<div id=\"app\"><noscript>"),
            "the report file stays static"
        );
        let live = live_page("{}");
        assert!(live.contains("<div id=\"app\" data-live=\"events\">"));
        for needle in ["src=", "href=", "@import", "url(", "http://", "https://"] {
            assert!(!live.contains(needle), "{needle} in the live page");
        }
    }
}
