use crate::{Context, JsNativeErrorKind, JsValue, Source, TestAction, run_test_actions};
use indoc::indoc;

#[test]
fn ordinary_has_instance_nonobject_prototype() {
    run_test_actions([TestAction::assert_native_error(
        indoc! {r#"
            function C() {}
            C.prototype = 1
            String instanceof C
        "#},
        JsNativeErrorKind::Type,
        "function has non-object prototype in instanceof check",
    )]);
}

#[test]
fn object_properties_return_order() {
    run_test_actions([
        TestAction::run_harness(),
        TestAction::run(indoc! {r#"
                var o = {
                    p1: 'v1',
                    p2: 'v2',
                    p3: 'v3',
                };
                o.p4 = 'v4';
                o[2] = 'iv2';
                o[0] = 'iv0';
                o[1] = 'iv1';
                delete o.p1;
                delete o.p3;
                o.p1 = 'v1';
            "#}),
        TestAction::assert(r#"arrayEquals(Object.keys(o), [ "0", "1", "2", "p2", "p4", "p1" ])"#),
        TestAction::assert(
            r#"arrayEquals(Object.values(o), [ "iv0", "iv1", "iv2", "v2", "v4", "v1" ])"#,
        ),
    ]);
}

#[test]
fn enumerable_own_entries_reads_what_object_entries_reads() {
    let context = &mut Context::default();
    let source = r#"
        const proto = { inherited: 1 };
        const o = Object.create(proto);
        o.b = 'x';
        o[2] = 'two';
        Object.defineProperty(o, 'hidden', { value: 3, enumerable: false });
        o[Symbol('s')] = 4;
        Object.defineProperty(o, 'got', { get() { return this.b + '!'; }, enumerable: true });
        o.a = null;
        o
    "#;
    let object = context
        .eval(Source::from_bytes(source))
        .unwrap()
        .as_object()
        .unwrap()
        .clone();
    let entries: Vec<String> = object
        .enumerable_own_entries(context)
        .unwrap()
        .into_iter()
        .map(|(k, v)| format!("{k}={}", v.display()))
        .collect();
    assert_eq!(entries, ["2=\"two\"", "b=\"x\"", "got=\"x!\"", "a=null"]);

    // A proxy's traps and a throwing getter are honoured.
    let source = r#"
        new Proxy({ a: 1, b: 2 }, { ownKeys: () => ['b'] })
    "#;
    let proxy = context.eval(Source::from_bytes(source)).unwrap();
    let entries = proxy
        .as_object()
        .unwrap()
        .enumerable_own_entries(context)
        .unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].1, JsValue::from(2));
    let throwing = context
        .eval(Source::from_bytes("({ get x() { throw new Error('no'); } })"))
        .unwrap();
    assert!(throwing.as_object().unwrap().enumerable_own_entries(context).is_err());
}
