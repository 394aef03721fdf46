//! Quantity canonicalization as the API server stores resource values.

use crate::defaults::quantity::{Quantity, QuantityError, canonical_json};
use serde_json::json;

#[track_caller]
fn case(input: &serde_json::Value, expected: &str) {
    assert_eq!(
        canonical_json(input).as_deref(),
        Some(expected),
        "input {input}"
    );
}

#[test]
fn canonical_forms_match_the_api_server() {
    case(&json!("500m"), "500m");
    case(&json!("0.5"), "500m");
    case(&json!(0.5), "500m");
    case(&json!(1), "1");
    case(&json!("1000m"), "1");
    case(&json!("2000"), "2k");
    case(&json!("1500"), "1500");
    case(&json!("100Mi"), "100Mi");
    case(&json!("1024Mi"), "1Gi");
    case(&json!("1.5Gi"), "1536Mi");
    case(&json!("0.5Ki"), "512");
    case(&json!("1e3"), "1e3");
    case(&json!("1500u"), "2m");
    case(&json!("0"), "0");
    case(&json!("128974848"), "128974848");
    case(&json!("129e6"), "129e6");
    case(&json!("123Mi"), "123Mi");
    case(&json!("8Gi"), "8Gi");
}

#[test]
fn comparison_and_errors() {
    let one = Quantity::parse("1").unwrap();
    let thousand_milli = Quantity::parse("1000m").unwrap();
    assert!(one.cmp_value(&thousand_milli).is_eq());
    assert!(
        Quantity::parse("1Gi")
            .unwrap()
            .cmp_value(&Quantity::parse("1G").unwrap())
            .is_gt()
    );
    assert_eq!(Quantity::parse("1.5.5").unwrap_err(), QuantityError::Format);
    assert_eq!(Quantity::parse("5Qi").unwrap_err(), QuantityError::Format);
    assert_eq!(Quantity::parse("5ki").unwrap_err(), QuantityError::Suffix);
    assert_eq!(canonical_json(&json!(true)), None);
}
