//! Built-ins initialized on first use.
//!
//! A realm normally fills every intrinsic object when it is created: some 430 function
//! objects with their property tables, most of which a given script never touches. With
//! [`ContextBuilder::lazy_builtins`](crate::context::ContextBuilder::lazy_builtins) a realm
//! instead leaves the objects of a deferred built-in (its constructor and prototype, or its
//! namespace object such as `Math`) as the empty placeholders [`Intrinsics::uninit`] made,
//! and gives them the internal methods below. The first internal method called on any of
//! them — a property lookup, a call, `[[GetPrototypeOf]]`… — runs the built-in's `init`,
//! restores every object's own internal methods and then performs the call.
//!
//! Every path into a built-in's contents goes through an internal method, so the deferral
//! is invisible to scripts: the objects keep their identity (engine code holds them from
//! the start, as prototypes of new objects or as global bindings), `typeof` and
//! `IsCallable`/`IsConstructor` answer as for the real object (the placeholder methods keep
//! the callable shape of the methods they stand for), and inline caches can only have seen
//! the objects after initialization.
//!
//! The built-in is found through the realm current at the time of the call; a deferred
//! object reached from another realm before its own realm touched it is reported as a
//! `TypeError` instead of being read empty. Hosts that hand objects across realms should
//! leave `lazy_builtins` off.
//!
//! [`Intrinsics::uninit`]: crate::context::intrinsics::Intrinsics::uninit

use boa_gc::{Finalize, Trace};

use crate::{
    Context, JsNativeError, JsObject, JsResult, JsValue,
    object::{
        JsPrototype,
        internal_methods::{
            CallValue, InternalMethodCallContext, InternalMethodPropertyContext,
            InternalObjectMethods, ORDINARY_INTERNAL_METHODS,
        },
    },
    property::{PropertyDescriptor, PropertyKey},
    realm::Realm,
};

use super::{BuiltInConstructor, IntrinsicObject};

/// A built-in whose objects are placeholders until one of them is first used.
///
/// Inline rather than in vectors: a realm holds ~60 of these, and two small allocations
/// each would be a few KiB per context.
#[derive(Trace, Finalize)]
pub(crate) struct Deferred {
    /// The placeholders (a constructor and its prototype, or one object).
    objects: [Option<JsObject>; 2],
    /// The internal methods each placeholder gets back.
    #[unsafe_ignore_trace]
    vtables: [&'static InternalObjectMethods; 2],
    /// Fills the objects (`IntrinsicObject::init`).
    #[unsafe_ignore_trace]
    init: fn(&Realm),
}

impl Deferred {
    fn new(objects: [Option<JsObject>; 2], init: fn(&Realm)) -> Self {
        let vtables = objects.each_ref().map(|object| match object {
            Some(object) => {
                let vtable = object.vtable();
                object.set_vtable(placeholder_for(vtable));
                vtable
            }
            None => &PLACEHOLDER_OBJECT,
        });
        Self {
            objects,
            vtables,
            init,
        }
    }

    /// A built-in with a constructor and a prototype object.
    pub(crate) fn constructor<B: BuiltInConstructor>(realm: &Realm) -> Self {
        let standard = (B::STANDARD_CONSTRUCTOR)(realm.intrinsics().constructors());
        Self::new(
            [
                Some(standard.constructor().into()),
                Some(standard.prototype()),
            ],
            B::init,
        )
    }

    /// A built-in that fills one intrinsic object (a namespace such as `Math`, a
    /// prototype without a constructor, or a global function).
    pub(crate) fn object<B: IntrinsicObject>(realm: &Realm) -> Self {
        Self::new([Some(B::get(realm.intrinsics())), None], B::init)
    }

    fn holds(&self, object: &JsObject) -> bool {
        self.objects.iter().flatten().any(|o| o == object)
    }

    /// Gives the objects their own internal methods back, then fills them.
    fn initialize(self, realm: &Realm) {
        for (object, vtable) in self.objects.iter().zip(self.vtables) {
            if let Some(object) = object {
                object.set_vtable(vtable);
            }
        }
        (self.init)(realm);
    }
}

impl Realm {
    /// Initializes the deferred built-in `object` belongs to; `false` if it is not one of
    /// this realm's.
    fn initialize_deferred(&self, object: &JsObject) -> bool {
        let found = {
            let mut deferred = self.deferred_builtins_mut();
            deferred
                .iter()
                .position(|d| d.holds(object))
                .map(|i| deferred.swap_remove(i))
        };
        // The borrow ends before `init` runs: it may touch another deferred built-in.
        match found {
            Some(d) => {
                d.initialize(self);
                true
            }
            None => false,
        }
    }
}

/// Makes `object` (a placeholder) usable, through the realm current in `context`.
fn initialize(object: &JsObject, context: &Context) -> JsResult<()> {
    let realm = context.realm().clone();
    if realm.initialize_deferred(object) {
        return Ok(());
    }
    Err(JsNativeError::typ()
        .with_message("a built-in of another realm was used before that realm initialized it")
        .into())
}

/// The placeholder internal methods standing for `vtable`: they keep its callable shape,
/// since `IsCallable` and `IsConstructor` compare the `[[Call]]`/`[[Construct]]` slots.
fn placeholder_for(vtable: &'static InternalObjectMethods) -> &'static InternalObjectMethods {
    let ordinary = &ORDINARY_INTERNAL_METHODS;
    if core::ptr::fn_addr_eq(vtable.__call__, ordinary.__call__) {
        &PLACEHOLDER_OBJECT
    } else if core::ptr::fn_addr_eq(vtable.__construct__, ordinary.__construct__) {
        &PLACEHOLDER_FUNCTION
    } else {
        &PLACEHOLDER_CONSTRUCTOR
    }
}

/// Whether `object` still waits for its built-in to be initialized.
pub(crate) fn is_placeholder(object: &JsObject) -> bool {
    let vtable = object.vtable();
    [
        &PLACEHOLDER_OBJECT,
        &PLACEHOLDER_FUNCTION,
        &PLACEHOLDER_CONSTRUCTOR,
    ]
    .into_iter()
    .any(|p| core::ptr::eq(vtable, p))
}

/// Initializes `object` if it is a placeholder.
pub(crate) fn ensure_initialized(object: &JsObject, context: &Context) -> JsResult<()> {
    if is_placeholder(object) {
        initialize(object, context)?;
    }
    Ok(())
}

static PLACEHOLDER_OBJECT: InternalObjectMethods = InternalObjectMethods {
    __get_prototype_of__: get_prototype_of,
    __set_prototype_of__: set_prototype_of,
    __is_extensible__: is_extensible,
    __prevent_extensions__: prevent_extensions,
    __get_own_property__: get_own_property,
    __define_own_property__: define_own_property,
    __has_property__: has_property,
    __get__: get,
    __try_get__: try_get,
    __set__: set,
    __delete__: delete,
    __own_property_keys__: own_property_keys,
    __call__: ORDINARY_INTERNAL_METHODS.__call__,
    __construct__: ORDINARY_INTERNAL_METHODS.__construct__,
    shared_of: None,
};

static PLACEHOLDER_FUNCTION: InternalObjectMethods = InternalObjectMethods {
    __call__: call,
    ..PLACEHOLDER_OBJECT
};

static PLACEHOLDER_CONSTRUCTOR: InternalObjectMethods = InternalObjectMethods {
    __call__: call,
    __construct__: construct,
    ..PLACEHOLDER_OBJECT
};

fn get_prototype_of(obj: &JsObject, context: &mut Context) -> JsResult<JsPrototype> {
    initialize(obj, context)?;
    obj.__get_prototype_of__(context)
}

fn set_prototype_of(obj: &JsObject, val: JsPrototype, context: &mut Context) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__set_prototype_of__(val, context)
}

fn is_extensible(obj: &JsObject, context: &mut Context) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__is_extensible__(context)
}

fn prevent_extensions(obj: &JsObject, context: &mut Context) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__prevent_extensions__(context)
}

fn get_own_property(
    obj: &JsObject,
    key: &PropertyKey,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<Option<PropertyDescriptor>> {
    initialize(obj, context)?;
    obj.__get_own_property__(key, context)
}

fn define_own_property(
    obj: &JsObject,
    key: &PropertyKey,
    desc: PropertyDescriptor,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__define_own_property__(key, desc, context)
}

fn has_property(
    obj: &JsObject,
    key: &PropertyKey,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__has_property__(key, context)
}

fn get(
    obj: &JsObject,
    key: &PropertyKey,
    receiver: JsValue,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<JsValue> {
    initialize(obj, context)?;
    obj.__get__(key, receiver, context)
}

fn try_get(
    obj: &JsObject,
    key: &PropertyKey,
    receiver: JsValue,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<Option<JsValue>> {
    initialize(obj, context)?;
    obj.__try_get__(key, receiver, context)
}

fn set(
    obj: &JsObject,
    key: PropertyKey,
    value: JsValue,
    receiver: JsValue,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__set__(key, value, receiver, context)
}

fn delete(
    obj: &JsObject,
    key: &PropertyKey,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    initialize(obj, context)?;
    obj.__delete__(key, context)
}

fn own_property_keys(obj: &JsObject, context: &mut Context) -> JsResult<Vec<PropertyKey>> {
    initialize(obj, context)?;
    obj.__own_property_keys__(context)
}

fn call(
    obj: &JsObject,
    argument_count: usize,
    context: &mut InternalMethodCallContext<'_>,
) -> JsResult<CallValue> {
    initialize(obj, context)?;
    (obj.vtable().__call__)(obj, argument_count, context)
}

fn construct(
    obj: &JsObject,
    argument_count: usize,
    context: &mut InternalMethodCallContext<'_>,
) -> JsResult<CallValue> {
    initialize(obj, context)?;
    (obj.vtable().__construct__)(obj, argument_count, context)
}

#[cfg(test)]
mod tests {
    use crate::{Context, JsNativeErrorKind, Source, TestAction, js_string, run_test_actions};

    fn lazy_context() -> Context {
        Context::builder().lazy_builtins(true).build().unwrap()
    }

    #[test]
    fn deferred_builtins_are_placeholders_until_first_use() {
        let context = &mut lazy_context();
        let date = context.intrinsics().constructors().date().constructor();
        let map = context.intrinsics().constructors().map().constructor();
        let pending = context.realm().deferred_builtins_mut().len();
        let expected = crate::builtins::DEFERRED_BUILTINS
            - usize::from(!cfg!(feature = "float16"))
            - 2 * usize::from(!cfg!(feature = "annex-b"));
        assert_eq!(pending, expected, "built-ins deferred");
        assert!(super::is_placeholder(&date.clone().into()));

        let utc = context
            .eval(Source::from_bytes("Date.UTC(2000, 0, 1)"))
            .unwrap();
        assert_eq!(utc.as_number(), Some(946_684_800_000.0));
        assert!(!super::is_placeholder(&date.into()));
        assert!(super::is_placeholder(&map.into()));
        assert_eq!(context.realm().deferred_builtins_mut().len(), pending - 1);
    }

    #[test]
    fn a_placeholder_used_from_another_realm_is_a_type_error() {
        let context = &mut lazy_context();
        let map = context.intrinsics().constructors().map().constructor();
        let other = context.create_realm().unwrap();
        let home = context.enter_realm(other);
        let err = map.get(js_string!("groupBy"), context).unwrap_err();
        let err = err.as_native().expect("a native error");
        assert!(matches!(err.kind(), JsNativeErrorKind::Type));
        assert!(err.message().contains("another realm"), "{err}");
        context.enter_realm(home);
    }

    #[test]
    fn prototype_cycles_through_a_placeholder_are_refused() {
        // Function.prototype -> Date -> Function.prototype would be a cycle; the check walks
        // through Date although it was not filled yet.
        let context = &mut lazy_context();
        let refused = context
            .eval(Source::from_bytes(
                "Reflect.setPrototypeOf(Function.prototype, Date)",
            ))
            .unwrap();
        assert_eq!(refused.as_boolean(), Some(false));
    }

    #[test]
    fn placeholders_answer_as_the_objects_they_stand_for() {
        run_test_actions([
            TestAction::assert_eq("typeof Map", js_string!("function")),
            TestAction::assert_eq("typeof Math", js_string!("object")),
            TestAction::assert_eq("typeof encodeURI", js_string!("function")),
            TestAction::assert_native_error(
                "new encodeURI('a')",
                JsNativeErrorKind::Type,
                "not a constructor",
            ),
            TestAction::assert(
                "Object.getPrototypeOf(Int8Array) === Object.getPrototypeOf(Uint8Array)",
            ),
            TestAction::assert(
                "Object.getPrototypeOf(function*(){}.prototype) === Object.getPrototypeOf(function*(){}).prototype",
            ),
            TestAction::assert("new Set([1]) instanceof Set"),
            TestAction::assert_eq(
                "Object.prototype.toString.call(JSON)",
                js_string!("[object JSON]"),
            ),
            TestAction::assert_eq("Object.getOwnPropertyNames(Reflect).length", 13),
            TestAction::assert_eq("'a1b2'.replace(/\\d/g, '')", js_string!("ab")),
            TestAction::assert_eq("new Uint8Array(new ArrayBuffer(4)).length", 4),
            TestAction::assert_eq(
                "'ab'.at(-1) + (1.5).toFixed(2) + true.toString()",
                js_string!("b1.50true"),
            ),
            TestAction::assert_eq(
                "Object.prototype.toString.call(Object.getPrototypeOf(''))",
                js_string!("[object String]"),
            ),
            TestAction::assert(
                "Object.getPrototypeOf([].values()).__proto__ === Iterator.prototype",
            ),
        ]);
    }
}
