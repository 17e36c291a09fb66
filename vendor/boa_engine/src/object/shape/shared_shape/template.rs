use boa_gc::{Finalize, Trace};
use thin_vec::ThinVec;

use crate::{
    Context, JsValue,
    object::{
        IndexedProperties, JsObject, JsPrototype, NativeObject, Object, ObjectData, PropertyMap,
        shape::slot::SlotAttributes,
    },
    property::{Attribute, PropertyKey},
};

use super::{SharedShape, TransitionKey};

/// A template of an object's prototype and properties (keys and attributes), from which
/// objects are made with their property values filled in at once.
///
/// Making an object from a template costs one allocation, where defining its properties one
/// by one walks a shape transition per property. Every object made from one template shares
/// its shape, so property accesses on them hit the same inline caches.
///
/// ```
/// # use boa_engine::{Context, JsValue, js_string, builtins::object::OrdinaryObject, object::ObjectTemplate, property::Attribute};
/// let context = &mut Context::default();
/// let proto = context.intrinsics().constructors().object().prototype();
/// let mut template = ObjectTemplate::for_prototype(context, Some(proto));
/// template.property(js_string!("x").into(), Attribute::all());
/// template.property(js_string!("y").into(), Attribute::all());
/// let point = template.create(OrdinaryObject, vec![1.into(), 2.into()]);
/// assert_eq!(point.get(js_string!("y"), context).unwrap(), JsValue::from(2));
/// ```
#[derive(Debug, Clone, Trace, Finalize)]
pub struct ObjectTemplate {
    shape: SharedShape,
    /// Storage slots the properties take (an accessor takes two: getter and setter).
    #[unsafe_ignore_trace]
    slots: u32,
}

impl ObjectTemplate {
    /// Create a new [`ObjectTemplate`] from a shape without properties.
    pub(crate) fn new(shape: &SharedShape) -> Self {
        Self {
            shape: shape.clone(),
            slots: 0,
        }
    }

    /// Create and [`ObjectTemplate`] with a prototype, from a shape without properties.
    pub(crate) fn with_prototype(shape: &SharedShape, prototype: JsObject) -> Self {
        let shape = shape.change_prototype_transition(Some(prototype));
        Self { shape, slots: 0 }
    }

    /// A template for objects with `prototype` and no properties yet, on the shape tree of
    /// `context` (objects made from it may be used by any context sharing that tree).
    #[must_use]
    pub fn for_prototype(context: &Context, prototype: JsPrototype) -> Self {
        let root = context.root_shape().shape();
        Self {
            shape: root.change_prototype_transition(prototype),
            slots: 0,
        }
    }

    /// Check if the shape has a specific, prototype.
    pub(crate) fn has_prototype(&self, prototype: &JsObject) -> bool {
        self.shape.has_prototype(prototype)
    }

    /// Set the prototype of the [`ObjectTemplate`].
    ///
    /// This assumes that the prototype has not been set yet.
    pub(crate) fn set_prototype(&mut self, prototype: JsObject) -> &mut Self {
        self.shape = self.shape.change_prototype_transition(Some(prototype));
        self
    }

    /// Returns the inner shape of the [`ObjectTemplate`].
    pub(crate) const fn shape(&self) -> &SharedShape {
        &self.shape
    }

    /// Add a data property to the [`ObjectTemplate`]; its value comes next in the storage
    /// given to [`ObjectTemplate::create`].
    ///
    /// # Panics
    ///
    /// If `key` is an index or already a property of the template.
    pub fn property(&mut self, key: PropertyKey, attributes: Attribute) -> &mut Self {
        assert!(
            !matches!(&key, PropertyKey::Index(_)) && self.shape.lookup(&key).is_none(),
            "a template property is a new string or symbol key"
        );
        self.slots += 1;

        let attributes = SlotAttributes::from_bits_truncate(attributes.bits());
        self.shape = self.shape.insert_property_transition(TransitionKey {
            property_key: key,
            attributes,
        });
        self
    }

    /// Add an accessor property to the [`ObjectTemplate`]; its getter and setter come next
    /// in the storage given to [`ObjectTemplate::create`] (`undefined` for a missing one).
    ///
    /// # Panics
    ///
    /// If `key` is an index or already a property of the template.
    pub fn accessor(
        &mut self,
        key: PropertyKey,
        get: bool,
        set: bool,
        attributes: Attribute,
    ) -> &mut Self {
        assert!(
            !matches!(&key, PropertyKey::Index(_)) && self.shape.lookup(&key).is_none(),
            "a template property is a new string or symbol key"
        );
        self.slots += 2;

        let attributes = {
            let mut result = SlotAttributes::empty();
            result.set(
                SlotAttributes::CONFIGURABLE,
                attributes.contains(Attribute::CONFIGURABLE),
            );
            result.set(
                SlotAttributes::ENUMERABLE,
                attributes.contains(Attribute::ENUMERABLE),
            );

            result.set(SlotAttributes::GET, get);
            result.set(SlotAttributes::SET, set);

            result
        };

        self.shape = self.shape.insert_property_transition(TransitionKey {
            property_key: key,
            attributes,
        });
        self
    }

    /// Create an object from the [`ObjectTemplate`], with native `data` and the property
    /// values in `storage`, in the order the properties were added.
    ///
    /// # Panics
    ///
    /// If `storage` does not have one value per data property and two per accessor.
    pub fn create<T: NativeObject>(&self, data: T, storage: Vec<JsValue>) -> JsObject {
        assert_eq!(
            storage.len(),
            self.slots as usize,
            "the storage of a template object matches its properties"
        );
        let internal_methods = data.internal_methods();

        let mut object = Object {
            data: ObjectData::new(data),
            extensible: true,
            properties: PropertyMap::new(self.shape.clone().into(), IndexedProperties::default()),
            private_elements: ThinVec::new(),
        };

        object.properties.storage = storage;

        JsObject::from_object_and_vtable(object, internal_methods)
    }

    /// Create an object from the [`ObjectTemplate`]
    ///
    /// The storage must match the properties provided. It does not apply to
    /// the indexed properties.
    pub(crate) fn create_with_indexed_properties<T: NativeObject>(
        &self,
        data: T,
        storage: Vec<JsValue>,
        indexed_properties: IndexedProperties,
    ) -> JsObject {
        debug_assert_eq!(storage.len(), self.slots as usize);
        let internal_methods = data.internal_methods();
        let mut object = Object {
            data: ObjectData::new(data),
            extensible: true,
            properties: PropertyMap::new(self.shape.clone().into(), indexed_properties),
            private_elements: ThinVec::new(),
        };

        object.properties.storage = storage;

        JsObject::from_object_and_vtable(object, internal_methods)
    }
}

#[cfg(test)]
mod tests {
    use super::ObjectTemplate;
    use crate::{
        Context, JsValue, builtins::object::OrdinaryObject, js_string, property::Attribute,
    };

    fn template(context: &Context) -> ObjectTemplate {
        let proto = context.intrinsics().constructors().object().prototype();
        let mut template = ObjectTemplate::for_prototype(context, Some(proto));
        template
            .property(js_string!("a").into(), Attribute::all())
            .accessor(js_string!("b").into(), true, false, Attribute::ENUMERABLE)
            .property(js_string!("c").into(), Attribute::ENUMERABLE);
        template
    }

    #[test]
    fn objects_from_a_template_are_objects_with_those_properties() {
        let context = &mut Context::default();
        let getter = context
            .eval(crate::Source::from_bytes("(function () { return this.a * 2; })"))
            .unwrap();
        let t = template(context);
        let one = t.create(
            OrdinaryObject,
            vec![21.into(), getter.clone(), JsValue::undefined(), js_string!("x").into()],
        );
        let two = t.create(
            OrdinaryObject,
            vec![1.into(), getter, JsValue::undefined(), js_string!("y").into()],
        );
        // Both objects share one shape; a change to one leaves the other alone (below).
        assert_eq!(
            one.borrow().properties().shape.to_addr_usize(),
            two.borrow().properties().shape.to_addr_usize()
        );
        context
            .global_object()
            .set(js_string!("one"), one.clone(), false, context)
            .unwrap();
        context
            .global_object()
            .set(js_string!("two"), two.clone(), false, context)
            .unwrap();
        let eval = |context: &mut Context, src: &str| {
            context
                .eval(crate::Source::from_bytes(src))
                .unwrap()
                .to_string(context)
                .unwrap()
                .to_std_string_escaped()
        };
        assert_eq!(eval(context, "JSON.stringify(one)"), r#"{"a":21,"b":42,"c":"x"}"#);
        assert_eq!(eval(context, "Object.keys(two).join()"), "a,b,c");
        assert_eq!(eval(context, "two.b"), "2");
        // Attributes as the template gave them: `c` is read-only and not configurable,
        // `b` has no setter.
        assert_eq!(
            eval(context, "'use strict'; try { one.c = 1; 'no' } catch (e) { e.name }"),
            "TypeError"
        );
        assert_eq!(eval(context, "delete one.c"), "false");
        assert_eq!(eval(context, "delete one.a; 'a' in one"), "false");
        assert_eq!(eval(context, "Object.getOwnPropertyDescriptor(one, 'b').set"), "undefined");
        assert_eq!(eval(context, "Object.getPrototypeOf(one) === Object.prototype"), "true");
        assert_eq!(eval(context, "one.d = 5; 'd' in two"), "false");
    }

    #[test]
    #[should_panic(expected = "the storage of a template object matches its properties")]
    fn storage_must_match_the_properties() {
        let context = &mut Context::default();
        // `b` is an accessor: two slots, so three values are one short.
        let _ = template(context).create(OrdinaryObject, vec![1.into(), 2.into(), 3.into()]);
    }

    #[test]
    #[should_panic(expected = "a template property is a new string or symbol key")]
    fn a_key_is_added_once() {
        let context = &mut Context::default();
        let mut t = template(context);
        t.property(js_string!("a").into(), Attribute::all());
    }
}
