//! The serving rule tables of `fixtures/` as the unit tests read them: the same
//! rows `node --test` runs against negotiate.js and the CloudFront function, so
//! a disagreement between the languages is one failing row.

use serde_json::Value;

/// `fixtures/accept-encoding.json`.
pub fn accept_encoding() -> Value {
    serde_json::from_str(include_str!("../../fixtures/accept-encoding.json")).unwrap()
}

/// `fixtures/request-paths.json`.
pub fn request_paths() -> Value {
    serde_json::from_str(include_str!("../../fixtures/request-paths.json")).unwrap()
}

/// `fixtures/hostile-manifests.json`.
pub fn hostile_manifests() -> Value {
    serde_json::from_str(include_str!("../../fixtures/hostile-manifests.json")).unwrap()
}

/// A row's `accept`: the field's value, repeated fields joined with `,`.
pub fn accept(row: &Value) -> Option<String> {
    match &row["accept"] {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(fields) => Some(
            fields
                .iter()
                .map(|f| f.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(","),
        ),
        v => panic!("accept {v}"),
    }
}

/// The value of the dictionary named `name` in `table`.
pub fn dictionary(table: &Value, name: &str) -> String {
    match &table["dictionaries"][name] {
        Value::String(s) => s.clone(),
        Value::Object(o) => {
            let part = |k: &str| o[k].as_str().unwrap();
            let times = o["times"].as_u64().unwrap() as usize;
            format!(
                "{}{}{}",
                part("prefix"),
                part("repeat").repeat(times),
                part("suffix")
            )
        }
        v => panic!("dictionary {name}: {v}"),
    }
}

/// A row's `Available-Dictionary`: `None` when absent, and when repeated (a
/// repeated field is no valid value).
pub fn available_dictionary(table: &Value, row: &Value) -> Option<String> {
    row["dictionary"]
        .as_str()
        .map(|name| dictionary(table, name))
}

/// The manifest entry (JSON) of an asset at `key` that has `offer`'s
/// representations: each at its own name, with the ETag `"CODING"` (a
/// delta's `"CODING-DICTIONARY"`), a dictionary itself when it has deltas.
pub fn offer_asset(table: &Value, key: &str, offer: &Value) -> Value {
    let variants: Vec<Value> = offer["variants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            let coding = v[0].as_str().unwrap();
            let codec = crate::model::coding::Codec::parse(coding).unwrap();
            serde_json::json!({
                "coding": coding, "size": v[1], "blake3": "00", "etag": format!("\"{coding}\""),
                "path": crate::model::names::sibling_path(key, crate::model::names::Sibling::Variant(codec)),
            })
        })
        .collect();
    let deltas: Vec<Value> = offer["deltas"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let (coding, name) = (d[0].as_str().unwrap(), d[1].as_str().unwrap());
            let value = dictionary(table, name);
            let hash = crate::model::dictionary::parse_available_dictionary(&value).unwrap();
            let c = crate::model::coding::DeltaCoding::parse(coding).unwrap();
            serde_json::json!({
                "coding": coding, "dictionary": value, "dictionary_path": "old.js", "size": d[2],
                "blake3": "00", "etag": format!("\"{coding}-{name}\""),
                "path": crate::model::names::sibling_path(key, crate::model::names::Sibling::Delta(&hash, c)),
            })
        })
        .collect();
    let mut a = serde_json::json!({
        "size": offer["identity"], "blake3": "00", "sha256": "x",
        "content_type": "text/javascript; charset=utf-8", "etag": "\"identity\"",
        "encodings": variants, "skipped": {}, "deltas": deltas,
    });
    if !offer["deltas"].is_null() {
        a["use_as_dictionary"] = "match=\"/app-*.js\"".into();
    }
    a
}

/// A manifest with one asset per offer, at `app-3f2a9c1b.OFFER.js`.
pub fn offers_manifest(table: &Value) -> String {
    let mut files = serde_json::Map::new();
    for (name, offer) in table["offers"].as_object().unwrap() {
        let key = offer_key(name);
        files.insert(key.clone(), offer_asset(table, &key, offer));
    }
    serde_json::json!({"version": 1, "generator": "t", "settings": {}, "files": files}).to_string()
}

/// The key of the asset that has the offer `name`.
pub fn offer_key(name: &str) -> String {
    format!("app-3f2a9c1b.{name}.js")
}

/// `fixtures/routes.json`.
pub fn routes() -> Value {
    serde_json::from_str(include_str!("../../fixtures/routes.json")).unwrap()
}
