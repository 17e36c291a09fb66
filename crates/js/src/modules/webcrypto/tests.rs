//! `crypto.subtle` end to end in a VU: known answers and error names.
use serde_json::json;

use crate::test_js::run;

/// Runs `body` (async JS with `subtle`, `hex`, `unhex`, `bytes` and `reason` in scope)
/// in an init context; its return value comes back as JSON.
fn eval(body: &str) -> serde_json::Value {
    let src = format!(
        r#"
        const subtle = crypto.subtle;
        const hex = (b) => Array.from(new Uint8Array(b), (x) => (x < 16 ? '0' : '') + x.toString(16)).join('');
        const unhex = (s) => new Uint8Array(s.match(/../g).map((h) => parseInt(h, 16)));
        const bytes = (s) => new Uint8Array(Array.from(s, (c) => c.charCodeAt(0)));
        const reason = async (p) => {{ try {{ await p; return 'resolved'; }} catch (e) {{ return e.name; }} }};
        export const options = {{}};
        (async () => {{ {body} }})().then((v) => {{ options.out = v; }}, (e) => {{ options.error = String(e); }});
        "#
    );
    let out = run(&src).unwrap();
    assert!(out.get("error").is_none(), "script failed: {out}");
    out["out"].clone()
}

#[test]
fn hmac_rfc4231_vectors() {
    let out = eval(
        r#"
        const cases = [
          ['0b'.repeat(20), hex(bytes('Hi There'))],
          ['aa'.repeat(20), 'dd'.repeat(50)],
          ['aa'.repeat(131), hex(bytes('Test Using Larger Than Block-Size Key - Hash Key First'))],
        ];
        const out = [];
        for (const [k, d] of cases) {
          for (const hash of ['SHA-256', 'SHA-384', 'SHA-512']) {
            const key = await subtle.importKey('raw', unhex(k), { name: 'HMAC', hash }, false, ['sign']);
            out.push(hex(await subtle.sign('HMAC', key, unhex(d))));
          }
        }
        return out;
        "#,
    );
    assert_eq!(
        out,
        json!([
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6",
            "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
            "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b2a5ab39dc13814b94e3ab6e101a34f27",
            "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb",
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952",
            "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598",
        ])
    );
}

#[test]
fn digests_accept_every_buffer_source() {
    let out = eval(
        r#"
        const abc = bytes('xabcx');
        return [
          hex(await subtle.digest('sha-1', abc.buffer.slice(1, 4))),
          hex(await subtle.digest({ name: 'SHA-256' }, abc.subarray(1, 4))),
          hex(await subtle.digest('SHA-256', new DataView(abc.buffer, 1, 3))),
          await reason(subtle.digest('SHA-256', 'abc')),
          await reason(subtle.digest('MD5', abc)),
          await reason(subtle.digest('HMAC', abc)),
        ];
        "#,
    );
    let sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
    assert_eq!(
        out,
        json!([
            "a9993e364706816aba3e25717850c26c9cd0d89d",
            sha256,
            sha256,
            "OperationError",
            "NotSupportedError",
            "NotSupportedError",
        ])
    );
}

#[test]
fn rejections_are_named_errors() {
    let out = eval(
        r#"
        try { await subtle.digest('MD5', new Uint8Array(1)); } catch (e) {
          return [e.name, e instanceof Error, String(e).startsWith('NotSupportedError: '), Object.keys(e)];
        }
        "#,
    );
    assert_eq!(
        out,
        json!(["NotSupportedError", true, true, ["name", "message"]])
    );
}

#[test]
fn keys_import_and_export_as_jwk() {
    let out = eval(
        r#"
        const jwk = { kty: 'oct', k: 'AAECAwQFBgcICQoLDA0ODw', alg: 'A128GCM', ext: true, key_ops: ['encrypt', 'decrypt'] };
        const key = await subtle.importKey('jwk', jwk, 'AES-GCM', true, ['encrypt']);
        const again = await subtle.exportKey('jwk', key);
        const raw = hex(await subtle.exportKey('raw', key));
        return [
          key.algorithm, key.usages, again, raw,
          await reason(subtle.importKey('jwk', { ...jwk, alg: 'A256GCM' }, 'AES-GCM', true, ['encrypt'])),
          await reason(subtle.importKey('jwk', { ...jwk, kty: 'RSA' }, 'AES-GCM', true, ['encrypt'])),
          await reason(subtle.importKey('jwk', { ...jwk, ext: false }, 'AES-GCM', true, ['encrypt'])),
          await reason(subtle.importKey('jwk', { ...jwk, key_ops: ['decrypt'] }, 'AES-GCM', false, ['encrypt'])),
          await reason(subtle.importKey('spki', new Uint8Array(16), 'AES-GCM', false, ['encrypt'])),
          await reason(subtle.exportKey('pkcs8', key)),
          await reason(subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', false, [])),
        ];
        "#,
    );
    assert_eq!(out[0], json!({"name": "AES-GCM", "length": 128}));
    assert_eq!(out[1], json!(["encrypt"]));
    assert_eq!(
        out[2],
        json!({"key_ops": ["encrypt"], "alg": "A128GCM", "k": "AAECAwQFBgcICQoLDA0ODw", "kty": "oct", "ext": true})
    );
    assert_eq!(out[3], json!("000102030405060708090a0b0c0d0e0f"));
    assert_eq!(
        out.as_array().unwrap()[4..],
        json!([
            "DataError",
            "DataError",
            "DataError",
            "DataError",
            "NotSupportedError",
            "NotSupportedError",
            "SyntaxError"
        ])
        .as_array()
        .unwrap()[..]
    );
}

#[test]
fn generated_keys_have_the_requested_sizes() {
    let out = eval(
        r#"
        const sizes = [];
        for (const length of [128, 192, 256]) {
          const k = await subtle.generateKey({ name: 'AES-CBC', length }, true, ['encrypt', 'decrypt']);
          sizes.push((await subtle.exportKey('raw', k)).byteLength);
        }
        const h = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, true, ['sign']);
        const h2 = await subtle.generateKey({ name: 'HMAC', hash: 'SHA-256', length: 100 }, true, ['sign']);
        const a = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
        const b = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
        return [
          sizes, h.algorithm, (await subtle.exportKey('raw', h)).byteLength,
          h2.algorithm.length, (await subtle.exportKey('raw', h2)).byteLength,
          hex(await subtle.exportKey('raw', a)) !== hex(await subtle.exportKey('raw', b)),
          await reason(subtle.generateKey({ name: 'AES-GCM', length: 100 }, true, ['encrypt'])),
          await reason(subtle.generateKey({ name: 'HMAC' }, true, ['sign'])),
          await reason(subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign'])),
          await reason(subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-192' }, true, ['sign'])),
        ];
        "#,
    );
    assert_eq!(
        out,
        json!([
            [16, 24, 32],
            {"name": "HMAC", "hash": {"name": "SHA-256"}, "length": 512},
            64,
            100,
            13,
            true,
            "OperationError",
            "TypeError",
            "resolved",
            "NotSupportedError"
        ])
    );
}

#[test]
fn every_method_exists_and_checks_its_keys() {
    let out = eval(
        r#"
        return [
          Object.keys(subtle),
          await reason(subtle.deriveBits({ name: 'ECDH' }, null, 128)),
          await reason(subtle.wrapKey('raw', null, null, 'AES-KW')),
          typeof subtle.deriveKey(),
        ];
        "#,
    );
    assert_eq!(
        out,
        json!([
            [
                "decrypt",
                "deriveBits",
                "deriveKey",
                "digest",
                "encrypt",
                "exportKey",
                "generateKey",
                "importKey",
                "sign",
                "unwrapKey",
                "verify",
                "wrapKey"
            ],
            "InvalidAccessError",
            "TypeError",
            "object"
        ])
    );
}

#[test]
fn asymmetric_keys_sign_verify_encrypt_and_derive() {
    let out = eval(
        r#"
        const msg = bytes('hello');
        const out = [];
        for (const [curve, hash] of [['P-256', 'SHA-256'], ['P-384', 'SHA-384'], ['P-521', 'SHA-512'], ['P-521', 'SHA-1']]) {
          const k = await subtle.generateKey({ name: 'ECDSA', namedCurve: curve }, true, ['sign', 'verify']);
          const sig = await subtle.sign({ name: 'ECDSA', hash }, k.privateKey, msg);
          out.push([sig.byteLength, await subtle.verify({ name: 'ECDSA', hash }, k.publicKey, sig, msg),
            await subtle.verify({ name: 'ECDSA', hash }, k.publicKey, sig, bytes('other'))]);
        }
        const e = new Uint8Array([1, 0, 1]);
        const p1 = await subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: e, hash: 'SHA-256' }, true, ['sign', 'verify']);
        const s1 = await subtle.sign('RSASSA-PKCS1-v1_5', p1.privateKey, msg);
        // PKCS #1 v1.5 signatures are deterministic.
        out.push([hex(s1) === hex(await subtle.sign('RSASSA-PKCS1-v1_5', p1.privateKey, msg)),
          await subtle.verify('RSASSA-PKCS1-v1_5', p1.publicKey, s1, msg), p1.publicKey.algorithm.name,
          Array.from(p1.publicKey.algorithm.publicExponent), p1.publicKey.algorithm.modulusLength]);
        const pss = await subtle.generateKey({ name: 'RSA-PSS', modulusLength: 1024, publicExponent: e, hash: 'SHA-256' }, true, ['sign', 'verify']);
        const s2 = await subtle.sign({ name: 'RSA-PSS', saltLength: 32 }, pss.privateKey, msg);
        out.push([await subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, pss.publicKey, s2, msg),
          await subtle.verify({ name: 'RSA-PSS', saltLength: 0 }, pss.publicKey, s2, msg),
          await subtle.verify({ name: 'RSA-PSS', saltLength: 20 }, pss.publicKey, s2, msg)]);
        const o = await subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: e, hash: 'SHA-1' }, true, ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']);
        const c = await subtle.encrypt({ name: 'RSA-OAEP', label: bytes('l') }, o.publicKey, msg);
        out.push([hex(await subtle.decrypt({ name: 'RSA-OAEP', label: bytes('l') }, o.privateKey, c)) === hex(msg),
          await reason(subtle.decrypt({ name: 'RSA-OAEP', label: bytes('x') }, o.privateKey, c)),
          o.privateKey.usages, o.publicKey.usages]);
        const aes = await subtle.generateKey({ name: 'AES-GCM', length: 128 }, true, ['encrypt']);
        const wrapped = await subtle.wrapKey('raw', aes, o.publicKey, { name: 'RSA-OAEP' });
        const back = await subtle.unwrapKey('raw', wrapped, o.privateKey, { name: 'RSA-OAEP' }, 'AES-GCM', true, ['encrypt']);
        out.push(hex(await subtle.exportKey('raw', back)) === hex(await subtle.exportKey('raw', aes)));
        const kek = await subtle.generateKey({ name: 'AES-KW', length: 256 }, true, ['wrapKey', 'unwrapKey']);
        // AES-KW takes multiples of 8 bytes only, which a JWK's text seldom is.
        const w2 = await reason(subtle.wrapKey('jwk', p1.privateKey, kek, 'AES-KW'));
        const w3 = await subtle.wrapKey('raw', aes, kek, 'AES-KW');
        out.push([w2, w3.byteLength]);
        const a = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-384' }, true, ['deriveBits', 'deriveKey']);
        const b = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-384' }, true, ['deriveBits', 'deriveKey']);
        const ab = await subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 384);
        const ba = await subtle.deriveBits({ name: 'ECDH', public: a.publicKey }, b.privateKey, null);
        const dk = await subtle.deriveKey({ name: 'ECDH', public: b.publicKey }, a.privateKey, { name: 'AES-GCM', length: 256 }, true, ['encrypt']);
        out.push([hex(ab) === hex(ba), ab.byteLength, hex(await subtle.exportKey('raw', dk)) === hex(ab).slice(0, 64)]);
        return out;
        "#,
    );
    assert_eq!(
        out,
        json!([
            [64, true, false],
            [96, true, false],
            [132, true, false],
            [132, true, false],
            [true, true, "RSASSA-PKCS1-v1_5", [1, 0, 1], 1024],
            [true, true, false],
            [
                true,
                "OperationError",
                ["decrypt", "unwrapKey"],
                ["encrypt", "wrapKey"]
            ],
            true,
            ["OperationError", 24],
            [true, 48, true]
        ])
    );
}

#[test]
fn keys_round_trip_through_every_format() {
    let out = eval(
        r#"
        const out = [];
        const ec = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
        const alg = { name: 'ECDSA', namedCurve: 'P-256' };
        const spki = hex(await subtle.exportKey('spki', ec.publicKey));
        const raw = hex(await subtle.exportKey('raw', ec.publicKey));
        const jwk = await subtle.exportKey('jwk', ec.privateKey);
        const pkcs8 = hex(await subtle.exportKey('pkcs8', ec.privateKey));
        const fromRaw = await subtle.importKey('raw', unhex(raw), alg, true, ['verify']);
        const fromJwk = await subtle.importKey('jwk', jwk, alg, true, ['sign']);
        const fromPkcs8 = await subtle.importKey('pkcs8', unhex(pkcs8), alg, true, ['sign']);
        out.push([raw.length, spki.startsWith('3059301306072a8648ce3d020106082a8648ce3d030107'),
          hex(await subtle.exportKey('spki', fromRaw)) === spki,
          hex(await subtle.exportKey('pkcs8', fromJwk)) === pkcs8,
          JSON.stringify(await subtle.exportKey('jwk', fromPkcs8)) === JSON.stringify(jwk),
          Object.keys(jwk).sort(), fromJwk.type, fromRaw.type]);
        const e = new Uint8Array([1, 0, 1]);
        const rsa = await subtle.generateKey({ name: 'RSA-OAEP', modulusLength: 1024, publicExponent: e, hash: 'SHA-256' }, true, ['encrypt', 'decrypt']);
        const ralg = { name: 'RSA-OAEP', hash: 'SHA-256' };
        const rjwk = await subtle.exportKey('jwk', rsa.privateKey);
        const rpkcs8 = hex(await subtle.exportKey('pkcs8', rsa.privateKey));
        const rspki = hex(await subtle.exportKey('spki', rsa.publicKey));
        const r1 = await subtle.importKey('jwk', rjwk, ralg, true, ['decrypt']);
        const r2 = await subtle.importKey('spki', unhex(rspki), ralg, true, ['encrypt']);
        out.push([hex(await subtle.exportKey('pkcs8', r1)) === rpkcs8,
          hex(await subtle.exportKey('spki', r2)) === rspki, rjwk.alg, Object.keys(rjwk).sort(),
          await reason(subtle.importKey('jwk', { ...rjwk, alg: 'RSA-OAEP' }, ralg, true, ['decrypt'])),
          await reason(subtle.importKey('pkcs8', unhex(pkcs8), alg, true, ['sign']).then(() => subtle.importKey('pkcs8', unhex(pkcs8), { name: 'ECDSA', namedCurve: 'P-384' }, true, ['sign']))),
          await reason(subtle.importKey('spki', unhex(rspki), alg, true, ['verify'])),
          await reason(subtle.exportKey('raw', rsa.publicKey))]);
        return out;
        "#,
    );
    assert_eq!(
        out,
        json!([
            [
                130,
                true,
                true,
                true,
                true,
                ["crv", "d", "ext", "key_ops", "kty", "x", "y"],
                "private",
                "public"
            ],
            [
                true,
                true,
                "RSA-OAEP-256",
                ["alg", "d", "dp", "dq", "e", "ext", "key_ops", "kty", "n", "p", "q", "qi"],
                "DataError",
                "DataError",
                "DataError",
                "NotSupportedError"
            ]
        ])
    );
}
