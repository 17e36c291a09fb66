//! Intrinsics shared by the realms of one thread.
//!
//! Every realm normally builds its own intrinsics: some 430 built-in function objects, their
//! prototypes and property tables. A host running many isolated contexts on one thread (one
//! per virtual user, say) can build them once in a template context, [`SharedIntrinsics::freeze`]
//! them, and give each other context those same objects with
//! [`ContextBuilder::shared_intrinsics`](crate::context::ContextBuilder::shared_intrinsics).
//! Each such context keeps its own global object and global environment.
//!
//! # Isolation
//!
//! A shared object is never changed once frozen. Its property methods are wrapped: reads go
//! to the object itself until the current realm changes it. The first change a realm makes
//! (`[[DefineOwnProperty]]`, `[[Delete]]` of an existing property, `[[SetPrototypeOf]]` to
//! another prototype, `[[PreventExtensions]]`) copies the object's properties, prototype and
//! extensibility into an object private to that realm (its *overlay*), and from then on every
//! property method of that object, in that realm, works on the copy. Identities are kept:
//! `Array.prototype` is the same object in every realm, only what each realm sees of it
//! differs. Calls are not wrapped.
//!
//! Paths that touch an object's storage without its internal methods account for this:
//! inline caches skip an entry whose property lives in a shared object the current realm has
//! a copy of, and never write into a shared object ([`ic_entry_blocked`]); the array fast
//! paths test [`JsObject::is_array`], which is false for the shared `Array.prototype` (its
//! `IsArray` stays true).
//!
//! # Functions
//!
//! The shared native functions are given no realm, so they run in their caller's realm
//! (`GetFunctionRealm` of a shared built-in is the current realm): `Function(…)`, indirect
//! `eval` and the objects a built-in creates belong to the realm that called it. Only native
//! functions can be shared; a script function (closures over an environment) cannot.

use std::{
    cell::Cell,
    rc::Rc,
    sync::{Mutex, PoisonError},
};

use boa_gc::Gc;
use rustc_hash::FxHashSet;

use crate::{
    Context, JsNativeError, JsObject, JsResult, JsString, JsValue,
    builtins::{OrdinaryObject, array::ARRAY_EXOTIC_INTERNAL_METHODS, function::OrdinaryFunction},
    context::intrinsics::Intrinsics,
    native_function::NativeFunctionObject,
    object::{
        JsPrototype, Object,
        internal_methods::{
            InternalMethodPropertyContext, InternalObjectMethods, ORDINARY_INTERNAL_METHODS,
            immutable_prototype::IMMUTABLE_PROTOTYPE_EXOTIC_INTERNAL_METHODS,
        },
        shape::{
            RootShape, Shape,
            slot::{Slot, SlotAttributes},
        },
    },
    property::{PropertyDescriptor, PropertyKey},
};

/// Frozen intrinsics that contexts of this thread can build their realms on.
///
/// Made by [`SharedIntrinsics::freeze`]; cloning is cheap.
#[derive(Clone)]
pub struct SharedIntrinsics {
    intrinsics: Gc<Intrinsics>,
    root_shape: RootShape,
    objects: Rc<Cell<usize>>,
}

impl std::fmt::Debug for SharedIntrinsics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedIntrinsics")
            .field("objects", &self.objects.get())
            .finish_non_exhaustive()
    }
}

impl SharedIntrinsics {
    /// Freezes the intrinsics of `context`'s current realm, and the objects reachable from
    /// `extra` (host objects every sharing context should see), so that other contexts of
    /// this thread can use them.
    ///
    /// Everything reachable from them through prototypes and property values (getters and
    /// setters included) is shared. From now on a change to any of them, by `context` as
    /// by any sharing context, lands in a copy private to the realm that made it.
    ///
    /// # Errors
    ///
    /// The realm's built-ins must all be filled (a context built without
    /// `lazy_builtins`), and every object reached must be shareable: ordinary objects,
    /// native functions, arrays, the immutable-prototype `Object.prototype` and an empty
    /// `String` object; a script function, a proxy or any other exotic object is refused.
    pub fn freeze(context: &mut Context, extra: &[JsObject]) -> JsResult<Self> {
        let realm = context.realm().clone();
        if !realm.deferred_builtins_mut().is_empty() {
            return Err(JsNativeError::typ()
                .with_message("intrinsics filled on first use cannot be shared")
                .into());
        }
        let mut roots = Vec::new();
        realm
            .intrinsics()
            .for_each_object(&mut |o| roots.push(o.clone()));
        roots.extend(extra.iter().cloned());
        let objects = share_reachable(roots)?;
        Ok(Self {
            intrinsics: realm.intrinsics_gc().clone(),
            root_shape: context.root_shape().clone(),
            objects: Rc::new(Cell::new(objects)),
        })
    }

    /// Shares more objects with the realms built on these intrinsics, after the freeze:
    /// everything reachable from `roots` that is not shared yet, with the same rules as
    /// [`SharedIntrinsics::freeze`] (nothing is shared if one object cannot be). The objects
    /// may have been made in any realm of this thread built on these intrinsics, typically
    /// the first to need them; from now on that realm's changes to them are its own too.
    ///
    /// Returns how many objects were added.
    ///
    /// # Errors
    ///
    /// An object that cannot be shared (see [`SharedIntrinsics::freeze`]).
    pub fn share(&self, roots: &[JsObject]) -> JsResult<usize> {
        let added = share_reachable(roots.to_vec())?;
        self.objects.set(self.objects.get() + added);
        Ok(added)
    }

    /// How many objects are shared.
    #[must_use]
    pub fn object_count(&self) -> usize {
        self.objects.get()
    }

    pub(crate) fn intrinsics(&self) -> &Gc<Intrinsics> {
        &self.intrinsics
    }

    pub(crate) fn root_shape(&self) -> &RootShape {
        &self.root_shape
    }
}

/// Shares every object reachable from `roots` that is not shared yet, after checking that
/// all of them can be; returns how many.
fn share_reachable(roots: Vec<JsObject>) -> JsResult<usize> {
    let objects = reachable(roots);
    for object in &objects {
        if object.is::<OrdinaryFunction>() {
            return Err(JsNativeError::typ()
                .with_message("a script function cannot be shared between realms")
                .into());
        }
        if copy_vtable(object).is_none() {
            return Err(JsNativeError::typ()
                .with_message("an exotic object cannot be shared between realms")
                .into());
        }
    }
    for object in &objects {
        if let Some(mut function) = object.downcast_mut::<NativeFunctionObject>() {
            function.realm = None;
        }
        object.set_vtable(wrapper_for(object.vtable()));
    }
    Ok(objects.len())
}

/// Every object reachable from `roots` through prototypes and property values that is not
/// shared yet (an object shared before keeps its wrapper).
fn reachable(roots: Vec<JsObject>) -> Vec<JsObject> {
    let mut seen = FxHashSet::default();
    let mut stack = roots;
    let mut out = Vec::new();
    while let Some(object) = stack.pop() {
        if object.is_shared() || !seen.insert(object.addr()) {
            continue;
        }
        {
            let borrowed = object.borrow();
            let properties = &borrowed.properties;
            if let Some(prototype) = properties.shape.prototype() {
                stack.push(prototype);
            }
            let mut push = |desc: PropertyDescriptor| {
                for value in [desc.value(), desc.get(), desc.set()].into_iter().flatten() {
                    if let Some(o) = value.as_object() {
                        stack.push(o.clone());
                    }
                }
            };
            for key in properties.shape.keys() {
                if let Some(desc) = properties.get(&key) {
                    push(desc);
                }
            }
            for desc in properties.index_property_values() {
                push(desc);
            }
        }
        out.push(object);
    }
    out
}

/// The internal methods a realm's copy of `object` gets: the object's own where they do not
/// depend on its internal slots, the ordinary ones where the difference cannot show
/// (function objects, whose copy is never called; an empty `String` object, which has no
/// index properties); `None` for an object that cannot be shared.
fn copy_vtable(object: &JsObject) -> Option<&'static InternalObjectMethods> {
    let vtable = object.vtable().shared_of.unwrap_or(object.vtable());
    if has_ordinary_property_methods(vtable) {
        return Some(&ORDINARY_INTERNAL_METHODS);
    }
    if std::ptr::eq(vtable, &raw const ARRAY_EXOTIC_INTERNAL_METHODS)
        || std::ptr::eq(vtable, &raw const IMMUTABLE_PROTOTYPE_EXOTIC_INTERNAL_METHODS)
    {
        return Some(vtable);
    }
    if object
        .downcast_ref::<JsString>()
        .is_some_and(|s| s.is_empty())
    {
        return Some(&ORDINARY_INTERNAL_METHODS);
    }
    None
}

fn has_ordinary_property_methods(v: &InternalObjectMethods) -> bool {
    use std::ptr::fn_addr_eq as same;
    let o = &ORDINARY_INTERNAL_METHODS;
    same(v.__get_prototype_of__, o.__get_prototype_of__)
        && same(v.__set_prototype_of__, o.__set_prototype_of__)
        && same(v.__is_extensible__, o.__is_extensible__)
        && same(v.__prevent_extensions__, o.__prevent_extensions__)
        && same(v.__get_own_property__, o.__get_own_property__)
        && same(v.__define_own_property__, o.__define_own_property__)
        && same(v.__has_property__, o.__has_property__)
        && same(v.__try_get__, o.__try_get__)
        && same(v.__get__, o.__get__)
        && same(v.__set__, o.__set__)
        && same(v.__delete__, o.__delete__)
        && same(v.__own_property_keys__, o.__own_property_keys__)
}

/// A realm's private copy of the shared object `object`: its properties (same order and
/// slots), prototype and extensibility as they are now.
pub(crate) fn copy_of(object: &JsObject) -> JsObject {
    let vtable = copy_vtable(object).unwrap_or(&ORDINARY_INTERNAL_METHODS);
    let mut copy = Object::<OrdinaryObject>::default();
    {
        let borrowed = object.borrow();
        copy.properties.indexed_properties = borrowed.properties.indexed_properties.clone();
        copy.properties.shape = borrowed.properties.shape.detached();
        copy.properties.storage.clone_from(&borrowed.properties.storage);
        copy.extensible = borrowed.extensible;
    }
    JsObject::from_object_and_vtable(copy, vtable)
}

/// Whether an inline-cache entry found for `object` (whose shape is `shape`) must not be
/// used: its property lives in a shared object, and the access writes (a shared object is
/// never written) or the current realm has its own copy of that object.
#[inline]
pub(crate) fn ic_entry_blocked(
    object: &JsObject,
    shape: &Shape,
    slot: Slot,
    write: bool,
    context: &Context,
) -> bool {
    let blocked = |holder: &JsObject| {
        holder.is_shared() && (write || context.realm().overlay(holder).is_some())
    };
    if slot.attributes.contains(SlotAttributes::PROTOTYPE) {
        shape.prototype().is_some_and(|p| blocked(&p))
    } else {
        blocked(object)
    }
}

/// The internal methods of shared objects, one set per kind of object (each original set of
/// internal methods), made once and kept for the life of the process.
fn wrapper_for(original: &'static InternalObjectMethods) -> &'static InternalObjectMethods {
    static WRAPPERS: Mutex<Vec<(usize, &'static InternalObjectMethods)>> = Mutex::new(Vec::new());
    let key = std::ptr::from_ref(original) as usize;
    let mut wrappers = WRAPPERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((_, wrapper)) = wrappers.iter().find(|(k, _)| *k == key) {
        return wrapper;
    }
    let wrapper: &'static InternalObjectMethods = Box::leak(Box::new(InternalObjectMethods {
        __get_prototype_of__: get_prototype_of,
        __set_prototype_of__: set_prototype_of,
        __is_extensible__: is_extensible,
        __prevent_extensions__: prevent_extensions,
        __get_own_property__: get_own_property,
        __define_own_property__: define_own_property,
        __has_property__: has_property,
        __try_get__: try_get,
        __get__: get,
        __set__: set,
        __delete__: delete,
        __own_property_keys__: own_property_keys,
        __call__: original.__call__,
        __construct__: original.__construct__,
        shared_of: Some(original),
    }));
    wrappers.push((key, wrapper));
    wrapper
}

/// The shared object's own internal methods.
fn original(obj: &JsObject) -> &'static InternalObjectMethods {
    obj.vtable()
        .shared_of
        .expect("the shared-object internal methods are only installed with the originals")
}

fn not_cacheable(context: &mut InternalMethodPropertyContext<'_>) {
    context.slot().attributes |= SlotAttributes::NOT_CACHEABLE;
}

fn get_prototype_of(obj: &JsObject, context: &mut Context) -> JsResult<JsPrototype> {
    match context.realm().overlay(obj) {
        Some(copy) => copy.__get_prototype_of__(context),
        None => (original(obj).__get_prototype_of__)(obj, context),
    }
}

fn set_prototype_of(obj: &JsObject, val: JsPrototype, context: &mut Context) -> JsResult<bool> {
    // Setting the prototype it has is no change.
    if obj.__get_prototype_of__(context)? == val {
        return Ok(true);
    }
    // The copy's own check cannot see a cycle back to this object (it is not the copy).
    let mut p = val.clone();
    while let Some(proto) = p {
        if &proto == obj {
            return Ok(false);
        }
        let methods = proto.vtable().shared_of.unwrap_or(proto.vtable());
        if !std::ptr::fn_addr_eq(
            methods.__get_prototype_of__,
            ORDINARY_INTERNAL_METHODS.__get_prototype_of__,
        ) {
            break;
        }
        p = proto.__get_prototype_of__(context)?;
    }
    let copy = context.realm().overlay_or_create(obj);
    copy.__set_prototype_of__(val, context)
}

fn is_extensible(obj: &JsObject, context: &mut Context) -> JsResult<bool> {
    match context.realm().overlay(obj) {
        Some(copy) => copy.__is_extensible__(context),
        None => (original(obj).__is_extensible__)(obj, context),
    }
}

fn prevent_extensions(obj: &JsObject, context: &mut Context) -> JsResult<bool> {
    if !obj.__is_extensible__(context)? {
        return Ok(true);
    }
    let copy = context.realm().overlay_or_create(obj);
    copy.__prevent_extensions__(context)
}

fn get_own_property(
    obj: &JsObject,
    key: &PropertyKey,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<Option<PropertyDescriptor>> {
    match context.realm().overlay(obj) {
        Some(copy) => {
            let result = copy.__get_own_property__(key, context);
            not_cacheable(context);
            result
        }
        None => (original(obj).__get_own_property__)(obj, key, context),
    }
}

fn define_own_property(
    obj: &JsObject,
    key: &PropertyKey,
    desc: PropertyDescriptor,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    let copy = context.realm().overlay_or_create(obj);
    let result = copy.__define_own_property__(key, desc, context);
    not_cacheable(context);
    result
}

fn has_property(
    obj: &JsObject,
    key: &PropertyKey,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    (original(obj).__has_property__)(obj, key, context)
}

fn try_get(
    obj: &JsObject,
    key: &PropertyKey,
    receiver: JsValue,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<Option<JsValue>> {
    (original(obj).__try_get__)(obj, key, receiver, context)
}

fn get(
    obj: &JsObject,
    key: &PropertyKey,
    receiver: JsValue,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<JsValue> {
    (original(obj).__get__)(obj, key, receiver, context)
}

fn set(
    obj: &JsObject,
    key: PropertyKey,
    value: JsValue,
    receiver: JsValue,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    // A write that lands on this object goes through `define_own_property`, hence to the
    // realm's copy; one that lands on the receiver (a new own property of an object whose
    // prototype chain ends here) stays cacheable.
    (original(obj).__set__)(obj, key, value, receiver, context)
}

fn delete(
    obj: &JsObject,
    key: &PropertyKey,
    context: &mut InternalMethodPropertyContext<'_>,
) -> JsResult<bool> {
    // Deleting a property the object does not have is no change.
    if obj.__get_own_property__(key, context)?.is_none() {
        return Ok(true);
    }
    let copy = context.realm().overlay_or_create(obj);
    let result = copy.__delete__(key, context);
    not_cacheable(context);
    result
}

fn own_property_keys(obj: &JsObject, context: &mut Context) -> JsResult<Vec<PropertyKey>> {
    match context.realm().overlay(obj) {
        Some(copy) => copy.__own_property_keys__(context),
        None => (original(obj).__own_property_keys__)(obj, context),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;
    use std::hash::{Hash, Hasher};

    use rustc_hash::FxHasher;

    use super::{SharedIntrinsics, reachable};
    use crate::{Context, JsObject, JsValue, Source, property::PropertyKey, value::JsVariant};

    thread_local! {
        // Leaked: a `Gc` must not outlive the thread's collector, and thread-local
        // destructors run in no guaranteed order.
        static TEMPLATE: Cell<Option<&'static (SharedIntrinsics, u64)>> = const { Cell::new(None) };
    }

    /// This test thread's shared intrinsics, frozen from an eager context on first use.
    pub(crate) fn thread_template() -> SharedIntrinsics {
        template().0.clone()
    }

    fn template() -> &'static (SharedIntrinsics, u64) {
        TEMPLATE.with(|t| {
            if let Some(template) = t.get() {
                return template;
            }
            let mut context = Context::default();
            let shared = SharedIntrinsics::freeze(&mut context, &[])
                .expect("Boa's own built-ins can be shared");
            let print = fingerprint(&shared);
            let template: &'static _ = Box::leak(Box::new((shared, print)));
            t.set(Some(template));
            template
        })
    }

    /// Fails if anything a realm can see of this thread's shared intrinsics changed since
    /// they were frozen.
    pub(crate) fn assert_thread_template_unchanged() {
        if let Some((shared, print)) = TEMPLATE.with(Cell::get) {
            assert_eq!(
                fingerprint(shared),
                *print,
                "the shared intrinsics were changed"
            );
        }
    }

    /// A digest of every shared object: its internal methods, extensibility, prototype, and
    /// each property (key, attributes, value) in order. Objects are hashed by identity.
    pub(crate) fn fingerprint(shared: &SharedIntrinsics) -> u64 {
        let mut roots = Vec::new();
        shared
            .intrinsics()
            .for_each_object(&mut |o| roots.push(o.clone()));
        let mut objects = Vec::new();
        // `reachable` skips shared objects: walk with the marks lifted for the count, by
        // collecting from each root separately.
        let mut seen = rustc_hash::FxHashSet::default();
        let mut stack = roots;
        while let Some(o) = stack.pop() {
            if !seen.insert(o.addr()) {
                continue;
            }
            assert!(o.is_shared(), "an object reachable from the intrinsics is not shared");
            let b = o.borrow();
            if let Some(p) = b.properties.shape.prototype() {
                stack.push(p);
            }
            for key in b.properties.shape.keys() {
                if let Some(d) = b.properties.get(&key) {
                    for v in [d.value(), d.get(), d.set()].into_iter().flatten() {
                        if let Some(v) = v.as_object() {
                            stack.push(v.clone());
                        }
                    }
                }
            }
            drop(b);
            objects.push(o);
        }
        let _ = reachable;
        let mut h = FxHasher::default();
        for o in &objects {
            let b = o.borrow();
            o.addr().hash(&mut h);
            (std::ptr::from_ref(o.vtable()) as usize).hash(&mut h);
            b.extensible.hash(&mut h);
            b.properties.shape.prototype().map(|p| p.addr()).hash(&mut h);
            for key in b.properties.shape.keys() {
                hash_key(&key, &mut h);
                let d = b.properties.get(&key).expect("a listed key has a property");
                (d.writable(), d.enumerable(), d.configurable()).hash(&mut h);
                for v in [d.value(), d.get(), d.set()] {
                    hash_value(v, &mut h);
                }
            }
            for d in b.properties.index_property_values() {
                hash_value(d.value(), &mut h);
            }
        }
        h.finish()
    }

    fn hash_key(key: &PropertyKey, h: &mut FxHasher) {
        match key {
            PropertyKey::String(s) => s.to_std_string_escaped().hash(h),
            PropertyKey::Symbol(s) => s.hash().hash(h),
            PropertyKey::Index(i) => i.get().hash(h),
        }
    }

    fn hash_value(v: Option<&JsValue>, h: &mut FxHasher) {
        let Some(v) = v else {
            0u8.hash(h);
            return;
        };
        match v.variant() {
            JsVariant::Object(o) => o.addr().hash(h),
            JsVariant::Float64(f) => f.to_bits().hash(h),
            _ => v.display().to_string().hash(h),
        }
    }

    fn sharing_context() -> Context {
        Context::builder()
            .shared_intrinsics(thread_template())
            .build()
            .expect("a context on shared intrinsics")
    }

    fn eval(context: &mut Context, src: &str) -> JsValue {
        context
            .eval(Source::from_bytes(src))
            .unwrap_or_else(|e| panic!("{src}: {e}"))
    }

    /// Evaluates a conjunction, naming the terms that are false.
    fn eval_bool(context: &mut Context, src: &str) -> bool {
        let mut ok = true;
        for term in src.split("&&") {
            let v = eval(context, term);
            if v.as_boolean() != Some(true) {
                if let Some((left, _)) = term.rsplit_once("===") {
                    let left = eval(context, left).display().to_string();
                    eprintln!("false: {} (left side: {left})", term.trim());
                } else {
                    eprintln!("false: {}", term.trim());
                }
                ok = false;
            }
        }
        ok
    }

    /// Changes of every kind, made through every path into a shared object.
    const CHANGES: &str = r#"
        Array.prototype.extra = 1;
        Array.prototype.push = function () { return 'mine'; };
        Object.prototype.everywhere = 'x';
        delete Math.max;
        Object.defineProperty(JSON, 'stringify', { value: () => 'no', writable: false });
        Object.freeze(Date.prototype);
        Object.setPrototypeOf(Map.prototype, null);
        Object.preventExtensions(Set);
        String.prototype[Symbol.for('tag')] = 'tagged';
        Array.prototype[0] = 'zero';
        Function.prototype.name2 = 'fn';
        Reflect.set(Number.prototype, 'n', 5);
        Error.prototype.name = 'Renamed';
        Promise.resolve.custom = true;
        Object.assign(RegExp.prototype, { flagsToo: 1 });
        Array.prototype.push.call(Array.prototype, 'pushed');
        true
    "#;

    /// What a realm that made [`CHANGES`] sees.
    const SEEN_BY_CHANGER: &str = r#"
        [].extra === 1 && [].push(1) === 'mine' && ({}).everywhere === 'x'
        && Math.max === undefined && JSON.stringify({}) === 'no'
        && Object.isFrozen(Date.prototype) && Object.getPrototypeOf(new Map()) === Map.prototype
        && Object.getPrototypeOf(Map.prototype) === null && !Object.isExtensible(Set)
        && ''[Symbol.for('tag')] === 'tagged' && [][0] === 'zero'
        && (function () {}).name2 === 'fn' && (1).n === 5
        && String(new Error('e')) === 'Renamed: e' && Promise.resolve.custom === true
        && /x/.flagsToo === 1 && Object.keys(Array.prototype).includes('extra')
        && Array.isArray(Array.prototype)
        && (() => { const seen = []; for (const k in []) seen[seen.length] = k; return seen.join(); })() === '0,extra,everywhere'
        && (() => { Object.setPrototypeOf(Map.prototype, { viaNewProto: 1 }); const seen = []; for (const k in new Map()) seen[seen.length] = k; return seen.join(); })() === 'viaNewProto,everywhere'
    "#;

    /// What a realm that made no change sees.
    const PRISTINE: &str = r#"
        [].extra === undefined && [].push(1) === 1 && ({}).everywhere === undefined
        && Math.max(1, 2) === 2 && JSON.stringify({ a: 1 }) === '{"a":1}'
        && !Object.isFrozen(Date.prototype) && Object.getPrototypeOf(Map.prototype) === Object.prototype
        && Object.isExtensible(Set) && ''[Symbol.for('tag')] === undefined && [][0] === undefined
        && (function () {}).name2 === undefined && (1).n === undefined
        && String(new Error('e')) === 'Error: e' && Promise.resolve.custom === undefined
        && /x/.flagsToo === undefined && Object.keys(Array.prototype).length === 0
        && Array.prototype.length === 0 && Array.isArray(Array.prototype)
    "#;

    #[test]
    fn a_realms_changes_to_shared_builtins_stay_in_that_realm() {
        let mut a = sharing_context();
        let mut b = sharing_context();
        assert!(eval_bool(&mut b, PRISTINE), "before any change");
        assert!(eval_bool(&mut a, CHANGES));
        assert!(eval_bool(&mut a, SEEN_BY_CHANGER));
        assert!(eval_bool(&mut b, PRISTINE), "another realm's changes showed");
        assert!(eval_bool(&mut sharing_context(), PRISTINE), "a new realm");
        // Array, Object, Number, String, Function, Date, Map, Error and RegExp prototypes,
        // Math, JSON, Set, Promise.resolve: one copy each, however many changes.
        assert_eq!(a.realm().overlay_count(), 13);
        assert_eq!(b.realm().overlay_count(), 0);
        assert_thread_template_unchanged();
    }

    #[test]
    fn inline_caches_follow_a_change_made_after_they_filled() {
        let mut a = sharing_context();
        let mut b = sharing_context();
        let src = r"
            function lookups() {
                let out = [];
                for (let i = 0; i < 50; i++) { out.push([].concat === Array.prototype.concat ? 'builtin' : 'own'); }
                for (let i = 0; i < 50; i++) { out.push(Math.max(1, 2)); }
                return out.join();
            }
            lookups()
        ";
        let text = |v: JsValue| v.as_string().expect("a string").to_std_string_escaped();
        let before = text(eval(&mut a, src));
        assert!(before.starts_with("builtin,") && before.ends_with(",2"));
        // The caches of `lookups` are warm; now this realm replaces both.
        eval(
            &mut a,
            "Array.prototype.concat = function () {}; Math.max = () => 'mine'; true",
        );
        let after = text(eval(&mut a, "lookups()"));
        assert!(after.contains(",mine"), "{after}");
        assert!(
            eval(
                &mut a,
                "Array.prototype.concat.toString().includes('native') === false"
            )
            .as_boolean()
                == Some(true)
        );
        // A cache warmed in the other realm, by the same source, keeps the built-ins.
        assert_eq!(text(eval(&mut b, src)), before);
        // A write through a warm set cache never reaches the shared object.
        eval(
            &mut a,
            "function put(o) { for (let i = 0; i < 20; i++) o.n = i; } put({ n: 0 }); put(Math); true",
        );
        assert!(eval_bool(&mut b, "Math.n === undefined"));
        assert!(eval_bool(&mut a, "Math.n === 19"));
        assert_thread_template_unchanged();
    }

    #[test]
    fn shared_functions_run_in_the_realm_that_calls_them() {
        let mut a = sharing_context();
        let mut b = sharing_context();
        eval(&mut a, "globalThis.mark = 'a'; true");
        eval(&mut b, "globalThis.mark = 'b'; true");
        assert!(eval_bool(&mut a, "Function('return mark')() === 'a'"));
        assert!(eval_bool(&mut b, "Function('return this')().mark === 'b'"));
        assert!(eval_bool(&mut a, "(0, eval)('mark') === 'a'"));
        assert!(eval_bool(
            &mut b,
            "Object.getPrototypeOf(Reflect.construct(Array, [])) === Array.prototype"
        ));
    }

    #[test]
    fn a_prototype_cycle_through_shared_objects_is_refused() {
        let mut a = sharing_context();
        assert!(eval_bool(
            &mut a,
            "Reflect.setPrototypeOf(Function.prototype, DataView) === false \
             && Reflect.setPrototypeOf(Object.getPrototypeOf(Int8Array), Int8Array) === false"
        ));
        // Through a prototype the realm changed: still refused.
        assert!(eval_bool(
            &mut a,
            "const o = {}; Object.setPrototypeOf(Map.prototype, o); \
             Reflect.setPrototypeOf(o, Map.prototype) === false"
        ));
    }

    #[test]
    fn objects_made_in_a_sharing_realm_can_be_shared_later() {
        let shared = thread_template();
        let mut a = sharing_context();
        let mut b = sharing_context();
        // `a` makes an object with a native function; once shared, `b` may use it.
        let exports = eval(&mut a, "({ version: 1, list: [1, 2], plain: { deep: 'x' } })")
            .as_object()
            .expect("an object");
        let f = crate::object::FunctionObjectBuilder::new(
            a.realm(),
            crate::NativeFunction::from_fn_ptr(|_, _, ctx| {
                Ok(ctx.global_object().get(crate::js_string!("mark"), ctx)?)
            }),
        )
        .build();
        exports
            .set(crate::js_string!("read"), f, true, &mut a)
            .expect("set");
        let before = shared.object_count();
        // The object, its array, its nested object and the function.
        assert_eq!(shared.share(&[exports.clone()]).expect("shareable"), 4);
        assert_eq!(shared.object_count(), before + 4);
        assert!(exports.is_shared());
        for (ctx, mark) in [(&mut a, "a"), (&mut b, "b")] {
            ctx.register_global_property(crate::js_string!("exports"), exports.clone(), crate::property::Attribute::all())
                .expect("global");
            eval(ctx, &format!("globalThis.mark = '{mark}'; true"));
            // The native runs in the realm of whoever calls it.
            assert!(eval_bool(ctx, &format!("exports.read() === '{mark}'")));
        }
        eval(&mut a, "exports.version = 2; exports.list.push(3); exports.plain.deep = 'y'; true");
        assert!(eval_bool(&mut a, "exports.version === 2 && exports.list.length === 3 && exports.plain.deep === 'y'"));
        assert!(eval_bool(&mut b, "exports.version === 1 && exports.list.length === 2 && exports.plain.deep === 'x'"));
        // A script function is refused, and nothing of the graph is shared then.
        let closure = eval(&mut a, "({ holder: {}, f() {} })").as_object().expect("an object");
        assert!(shared.share(&[closure.clone()]).is_err());
        assert!(!closure.is_shared());
    }

    #[test]
    fn the_global_objects_of_sharing_realms_share_their_shape() {
        let mut a = sharing_context();
        let mut b = sharing_context();
        let shape = |c: &Context| c.global_object().borrow().properties.shape.to_addr_usize();
        assert_eq!(shape(&a), shape(&b));
        assert!(a.global_object().borrow().properties.shape.is_shared());
        eval(&mut a, "globalThis.onlyA = 1; var alsoA = 2; delete globalThis.Map; true");
        assert!(eval_bool(&mut a, "onlyA === 1 && alsoA === 2 && typeof Map === 'undefined'"));
        assert!(eval_bool(
            &mut b,
            "typeof onlyA === 'undefined' && typeof alsoA === 'undefined' && typeof Map === 'function'"
        ));
        assert!(eval_bool(&mut b, "Object.keys(globalThis).length === 0 && globalThis.globalThis === globalThis"));
    }

    #[test]
    fn host_objects_can_be_shared_and_script_functions_cannot() {
        let mut context = Context::default();
        let console = context
            .eval(Source::from_bytes("({ log() {}, nested: { deep: [1, 2] } })"))
            .expect("an object")
            .as_object()
            .expect("an object");
        assert!(
            SharedIntrinsics::freeze(&mut context, &[console]).is_err(),
            "a method written in JS is a script function"
        );
        let mut context = Context::default();
        let plain = JsObject::with_object_proto(context.intrinsics());
        let shared = SharedIntrinsics::freeze(&mut context, &[plain.clone()]).expect("shareable");
        assert!(plain.is_shared());
        assert!(shared.object_count() > 400, "{}", shared.object_count());
    }
}
