//! The demo shop's HTML storefront, for browser journeys (`examples/browser.js`): pages
//! rendered from what the shop passes in, so this file knows no shop state.
//!
//! The pages exercise what a browser test meets: a login form that sets a session cookie,
//! a product list with images, a `<select>`, a checkbox, an iframe, a banner that shifts
//! the layout after load (a non-zero CLS) and a form post.

/// The login form; `error` is shown above it after a failed attempt.
pub fn login_page(error: Option<&str>) -> String {
    let error = error.map_or(String::new(), |e| {
        format!("<p id=\"error\" role=\"alert\">{}</p>", escape(e))
    });
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Log in - rk6 demo shop</title>{STYLE}</head>
<body><header><img src="/shop/logo.svg" alt="rk6 demo shop" width="160" height="40"></header>
<main><h1>Log in</h1>{error}
<form method="post" action="/shop/login">
<label for="username">User name</label><input id="username" name="username" autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password">
<button id="login" type="submit">Log in</button>
</form></main></body></html>
"#
    )
}

/// The catalogue for `user`: `products` as (id, name, price).
pub fn products_page(user: &str, products: &[(u64, &str, f64)]) -> String {
    let mut items = String::new();
    let mut options = String::new();
    for (id, name, price) in products {
        items.push_str(&format!(
            "<li class=\"product\" data-testid=\"product-{id}\"><img src=\"/shop/img/{id}.svg\" alt=\"{name}\" width=\"120\" height=\"80\"><span class=\"name\">{name}</span> <span class=\"price\">${price:.2}</span></li>\n",
            name = escape(name)
        ));
        options.push_str(&format!("<option value=\"{id}\">{}</option>", escape(name)));
    }
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Products - rk6 demo shop</title>{STYLE}</head>
<body><header><img src="/shop/logo.svg" alt="rk6 demo shop" width="160" height="40">
<span id="user">Signed in as {user}</span> <a id="logout" href="/shop/logout">Log out</a></header>
<main><h1>Products</h1>
<ul id="products">
{items}</ul>
<form id="order" method="post" action="/shop/order">
<label for="product">Product</label><select id="product" name="product">{options}</select>
<label for="quantity">Quantity</label><input id="quantity" name="quantity" type="number" value="1" min="1">
<label><input id="gift" name="gift" type="checkbox"> Gift wrap</label>
<button id="place-order" type="submit">Place order</button>
</form>
<iframe id="help" src="/shop/help" title="Help" width="300" height="80"></iframe>
</main>
<script>
  // A promotion banner that arrives just after the first paint: it pushes the content
  // down, which web vitals count as layout shift.
  requestAnimationFrame(() => setTimeout(() => {{
    const b = document.createElement('p');
    b.id = 'promo';
    b.textContent = 'Free shipping today';
    b.style.cssText = 'height:60px;margin:0;background:#fd0';
    document.querySelector('main').prepend(b);
  }}, 0));
</script>
</body></html>
"#,
        user = escape(user),
    )
}

/// The order confirmation.
pub fn confirmation_page(
    order_id: u64,
    quantity: u64,
    name: &str,
    total: f64,
    gift: bool,
) -> String {
    let gift = if gift { " (gift wrapped)" } else { "" };
    format!(
        r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Order placed - rk6 demo shop</title>{STYLE}</head>
<body><main><h1 id="confirmation">Order #{order_id} placed</h1>
<p id="summary">{quantity} x {name}{gift}: ${total:.2}</p>
<a id="continue" href="/shop/products">Continue shopping</a></main></body></html>
"#,
        name = escape(name)
    )
}

/// The help page shown in the catalogue's iframe.
pub const HELP_PAGE: &str = r#"<!doctype html>
<html><head><meta charset="utf-8"><title>Help</title></head>
<body><p id="help-text">Questions? We answer within one p99.</p>
<button id="contact" onclick="this.textContent='Thanks!'">Contact us</button></body></html>
"#;

/// The logo.
pub const LOGO_SVG: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" width="160" height="40"><rect width="160" height="40" fill="#234"/><text x="10" y="27" fill="#fff" font-family="sans-serif" font-size="18">rk6 shop</text></svg>"##;

/// A product's picture.
pub fn product_image(id: u64) -> String {
    let hue = (id * 67) % 360;
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="120" height="80"><rect width="120" height="80" fill="hsl({hue},60%,60%)"/><text x="50" y="48" font-size="24">{id}</text></svg>"#
    )
}

const STYLE: &str = "<style>body{font-family:sans-serif;margin:0}header{background:#eef;padding:8px}main{padding:8px}label{display:block;margin-top:6px}li{list-style:none;margin:4px 0}</style>";

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_what_they_are_given() {
        let p = products_page("<ann>", &[(1, "Mug & Co", 1.5)]);
        assert!(p.contains("Signed in as &lt;ann&gt;"));
        assert!(p.contains("Mug &amp; Co"));
        assert!(login_page(Some("bad \"x\"")).contains("bad &quot;x&quot;"));
        assert!(confirmation_page(3, 2, "Socks", 14.5, true)
            .contains("2 x Socks (gift wrapped): $14.50"));
    }
}
