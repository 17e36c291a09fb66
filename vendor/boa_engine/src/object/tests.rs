use crate::{
    Context, JsNativeErrorKind, JsValue, Source, TestAction, js_string, property::PropertyKey,
    run_test_actions,
};
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

#[test]
fn plain_entries_are_read_from_the_property_table() {
    let context = &mut Context::default();
    let eval = |context: &mut Context, source: &str| {
        context
            .eval(Source::from_bytes(source))
            .unwrap()
            .as_object()
            .unwrap()
            .clone()
    };
    let show = |entries: Vec<(PropertyKey, JsValue)>| -> Vec<String> {
        entries
            .into_iter()
            .map(|(k, v)| format!("{k}={}", v.display()))
            .collect()
    };
    // Data properties only: the table, in creation order, hidden and symbol keys skipped,
    // the same as the general path.
    let plain = eval(
        context,
        r#"
        const o = { b: 'x', a: 1 };
        Object.defineProperty(o, 'hidden', { value: 3, enumerable: false });
        o[Symbol('s')] = 4;
        o.c = null;
        delete o.a;
        o
    "#,
    );
    let fast = show(plain.plain_enumerable_own_entries().unwrap());
    assert_eq!(fast, ["b=\"x\"", "c=null"]);
    assert_eq!(show(plain.enumerable_own_entries(context).unwrap()), fast);
    assert!(!plain
        .own_property_is_enumerable(&js_string!("hidden").into(), context)
        .unwrap());
    assert!(plain
        .own_property_is_enumerable(&js_string!("b").into(), context)
        .unwrap());
    // An accessor, an index key, an exotic object: the general path decides.
    for source in [
        "({ get g() { return 1; } })",
        "({ 0: 'zero', a: 1 })",
        "[1, 2]",
        "new Proxy({ a: 1 }, {})",
    ] {
        let object = eval(context, source);
        assert!(object.plain_enumerable_own_entries().is_none(), "{source}");
    }
    // A non-enumerable accessor does not stop the table read.
    let hidden_getter = eval(
        context,
        "Object.defineProperty({ a: 1 }, 'g', { get() { return 2; }, enumerable: false })",
    );
    assert_eq!(
        show(hidden_getter.plain_enumerable_own_entries().unwrap()),
        ["a=1"]
    );
}
