//! A value as JSON, refusing a NaN or an infinity. `serde_json::to_value` writes those as `null`
//! without a word, so a typed value with a NaN in it would be stored as something else than what
//! was given (a claim won with `null`, a `once` recorded as done with `null` for good). This
//! serializer forwards everything to `serde_json`'s own and fails on a non-finite float; no crate
//! offers that switch (serde_json has none), and the forwarding is mechanical.

use serde::ser::{self, Serialize};
use serde_json::Value;
use serde_json::value::Serializer as ValueSerializer;

/// `value` as a `serde_json::Value`; an `Err` naming the problem for a non-finite float.
pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, serde_json::Error> {
    value.serialize(Finite(ValueSerializer))
}

/// A serializer that refuses non-finite floats and otherwise does what the one it wraps does.
struct Finite<S>(S);

/// A value to serialize through [`Finite`] (an element, a field, a map key or value).
struct Checked<'a, T: ?Sized>(&'a T);

impl<T: Serialize + ?Sized> Serialize for Checked<'_, T> {
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(Finite(serializer))
    }
}

fn not_finite<E: ser::Error>() -> E {
    E::custom("NaN and infinities cannot be represented in JSON")
}

macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $method(self, $($arg: $ty),*) -> Result<Self::Ok, Self::Error> {
            self.0.$method($($arg),*)
        })*
    };
}

impl<S: ser::Serializer> ser::Serializer for Finite<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Finite<S::SerializeSeq>;
    type SerializeTuple = Finite<S::SerializeTuple>;
    type SerializeTupleStruct = Finite<S::SerializeTupleStruct>;
    type SerializeTupleVariant = Finite<S::SerializeTupleVariant>;
    type SerializeMap = Finite<S::SerializeMap>;
    type SerializeStruct = Finite<S::SerializeStruct>;
    type SerializeStructVariant = Finite<S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool);
        serialize_i8(v: i8);
        serialize_i16(v: i16);
        serialize_i32(v: i32);
        serialize_i64(v: i64);
        serialize_i128(v: i128);
        serialize_u8(v: u8);
        serialize_u16(v: u16);
        serialize_u32(v: u32);
        serialize_u64(v: u64);
        serialize_u128(v: u128);
        serialize_char(v: char);
        serialize_str(v: &str);
        serialize_bytes(v: &[u8]);
        serialize_none();
        serialize_unit();
        serialize_unit_struct(name: &'static str);
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str);
    }

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        if v.is_finite() { self.0.serialize_f32(v) } else { Err(not_finite()) }
    }

    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        if v.is_finite() { self.0.serialize_f64(v) } else { Err(not_finite()) }
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_some(&Checked(value))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, name: &'static str, value: &T) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_struct(name, &Checked(value))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        self.0.serialize_newtype_variant(name, index, variant, &Checked(value))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        self.0.serialize_seq(len).map(Finite)
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        self.0.serialize_tuple(len).map(Finite)
    }

    fn serialize_tuple_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeTupleStruct, S::Error> {
        self.0.serialize_tuple_struct(name, len).map(Finite)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        self.0.serialize_tuple_variant(name, index, variant, len).map(Finite)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        self.0.serialize_map(len).map(Finite)
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Self::SerializeStruct, S::Error> {
        self.0.serialize_struct(name, len).map(Finite)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        self.0.serialize_struct_variant(name, index, variant, len).map(Finite)
    }
}

/// The compound serializers: each element, field, key and value through [`Checked`].
macro_rules! compound {
    ($trait:ident, fields) => {
        impl<S: ser::$trait> ser::$trait for Finite<S> {
            type Ok = S::Ok;
            type Error = S::Error;
            fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), S::Error> {
                self.0.serialize_field(key, &Checked(value))
            }
            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        }
    };
    ($trait:ident, $method:ident) => {
        impl<S: ser::$trait> ser::$trait for Finite<S> {
            type Ok = S::Ok;
            type Error = S::Error;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
                self.0.$method(&Checked(value))
            }
            fn end(self) -> Result<S::Ok, S::Error> {
                self.0.end()
            }
        }
    };
}

compound!(SerializeSeq, serialize_element);
compound!(SerializeTuple, serialize_element);
compound!(SerializeTupleStruct, serialize_field);
compound!(SerializeTupleVariant, serialize_field);
compound!(SerializeStruct, fields);
compound!(SerializeStructVariant, fields);

impl<S: ser::SerializeMap> ser::SerializeMap for Finite<S> {
    type Ok = S::Ok;
    type Error = S::Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), S::Error> {
        self.0.serialize_key(&Checked(key))
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), S::Error> {
        self.0.serialize_value(&Checked(value))
    }
    fn end(self) -> Result<S::Ok, S::Error> {
        self.0.end()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn finite_values_serialize_as_serde_json_does_and_non_finite_floats_are_refused() {
        #[derive(serde::Serialize)]
        struct Reading {
            celsius: f64,
            tags: Vec<(String, Option<f32>)>,
        }
        let fine = Reading { celsius: 21.5, tags: vec![("a".into(), Some(1.5)), ("b".into(), None)] };
        assert_eq!(super::to_value(&fine).unwrap(), serde_json::to_value(&fine).unwrap());
        assert_eq!(super::to_value(&json!({"n": [1, 2.5, null]})).unwrap(), json!({"n": [1, 2.5, null]}));
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(super::to_value(&bad).is_err(), "{bad}");
            assert!(super::to_value(&Reading { celsius: bad, tags: vec![] }).is_err(), "{bad} in a field");
            assert!(super::to_value(&Reading { celsius: 0.0, tags: vec![("x".into(), Some(bad as f32))] }).is_err());
            assert!(super::to_value(&std::collections::BTreeMap::from([("k", vec![bad])])).is_err(), "{bad} in a map");
        }
    }
}
