//! `precompress merge`: the partial manifests of a sharded run
//! (`model::shard::Partial`) checked to add up to one run of one tree, every
//! file they list checked on disk, and the manifest one run would have
//! written put together from them. Merge never compresses: it only checks,
//! unions, settles and writes; given a cache folder ([`merge_with`]), it
//! records the merged release in its release store, as a whole run does.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::model::coding::{Codec, DeltaCoding};
use crate::model::manifest::{Asset, Manifest};
use crate::model::names::variant_path;
use crate::model::published::{Listed, Published, FILE_NAME};
use crate::model::shard::{digest_keys, partial_of, Partial, Shard};

/// What `merge` did.
#[derive(Debug)]
#[non_exhaustive]
pub struct Merged {
    pub shards: u32,
    pub assets: usize,
    pub variants: usize,
    pub deltas: usize,
    /// Deltas the shards wrote that are not smaller than a variant another
    /// shard wrote: removed, as one run would have.
    pub removed: Vec<String>,
    pub manifest: PathBuf,
    /// What did not fail the merge: the release store's warnings.
    pub warnings: Vec<String>,
}

/// Merges the partial manifests found beside `manifest` into it: checks that
/// they are N distinct shards of one split of one tree with the same settings
/// and no errors, that together they ran every job once, and that every
/// asset, variant and delta they list is on disk in `root` with its hash; then
/// writes the manifest one run would have written and removes the partials.
/// Anything wrong: an error and nothing written.
pub fn merge(root: &Path, manifest: &Path) -> Result<Merged> {
    merge_with(root, manifest, None)
}

/// [`merge`], then, with `cache_dir`, the release recorded in its release
/// store (what the manifest marks, under DIR's site), so the next run with
/// that cache gets deltas against it: for a pipeline whose merge step holds
/// the cache (each shard records the release in its own cache too).
pub fn merge_with(root: &Path, manifest: &Path, cache_dir: Option<&Path>) -> Result<Merged> {
    if !root.is_dir() {
        return Err(Error::Config(format!("{}: not a folder", root.display())));
    }
    let default = crate::model::manifest::default_path(root);
    if crate::fsutil::canonical(manifest) != crate::fsutil::canonical(&default) {
        crate::model::manifest::may_replace(manifest)
            .map_err(|why| Error::Config(format!("--manifest {}: {why}", manifest.display())))?;
    }
    // Not while a run writes in DIR.
    let _lock = crate::fsutil::lock(root, crate::run::walk::LOCK_NAME, || {})?;
    let found = find_partials(manifest)?;
    let n = found[0].0.count;
    let partials = read_partials(manifest, found)?;
    let first = &partials[0].1;
    let files = union_assets(manifest, &partials)?;
    // The list goes on disk before the check, which decodes its variants
    // against it, and off again if the merge is refused.
    let published = published_list(root, manifest, &files)?;
    if let Some(bytes) = &published {
        crate::fsutil::write_atomic(&root.join(FILE_NAME), bytes, None)?;
    }
    if let Err(e) = on_disk(root, manifest, &files) {
        if published.is_some() {
            crate::fsutil::remove_if_exists(&root.join(FILE_NAME))?;
        }
        return Err(e);
    }
    let mut out = Manifest::new(first.manifest.settings.clone());
    out.base = first.manifest.base.clone();
    out.shared_dictionary = first.manifest.shared_dictionary.clone();
    out.documents_dictionary = first.manifest.documents_dictionary.clone();
    let mut removed = Vec::new();
    for (rel, mut a) in files {
        removed.extend(a.settle());
        out.files.insert(rel, a);
    }
    out.prune_delta_settings();
    out.write(manifest)?;
    for p in &removed {
        crate::fsutil::remove_if_exists(&root.join(p))?;
    }
    for (p, _) in &partials {
        crate::fsutil::remove_if_exists(p)?;
    }
    removed.sort();
    let mut warnings = Vec::new();
    if let Some(cache) = cache_dir {
        record(root, cache, &out, &mut warnings);
    }
    Ok(Merged {
        shards: n,
        assets: out.files.len(),
        variants: out.files.values().map(|a| a.encodings.len()).sum(),
        deltas: out.files.values().map(|a| a.deltas.len()).sum(),
        removed,
        manifest: manifest.to_path_buf(),
        warnings,
    })
}

/// The merged release's dictionaries (what `out` marks) into the release
/// store in `cache`, under the site of `root` and the manifest's base; each
/// copied only if it still has the hash the manifest gives.
fn record(root: &Path, cache: &Path, out: &Manifest, warnings: &mut Vec<String>) {
    let Some(store) = crate::run::state::store::Store::open(cache, warnings) else {
        return;
    };
    let base = out
        .base
        .clone()
        .unwrap_or_else(|| crate::model::path::ROOT_BASE.to_string());
    let site = crate::run::state::store::site_of(root, cache, &base);
    let assets: Vec<_> = out
        .files
        .iter()
        .filter(|(_, a)| a.use_as_dictionary.is_some())
        .filter_map(|(rel, a)| {
            // The manifest's SHA-256 is base64, as `Available-Dictionary` spells it.
            let sha =
                crate::model::dictionary::parse_available_dictionary(&format!(":{}:", a.sha256))?;
            Some((rel.clone(), root.join(rel), sha))
        })
        .collect();
    store.record(&site, &assets, warnings);
}

/// The list of the release's dictionaries (`model::published`), when the
/// shards list it and it is not on disk: derived data (what the merged
/// entries mark), which the sharded recipe does not upload; it must be the
/// bytes the shards listed, or the merge is refused.
fn published_list(
    root: &Path,
    manifest: &Path,
    files: &BTreeMap<String, Asset>,
) -> Result<Option<Vec<u8>>> {
    let Some(listed) = files.get(FILE_NAME) else {
        return Ok(None);
    };
    let path = root.join(FILE_NAME);
    if std::fs::symlink_metadata(&path).is_ok() {
        return Ok(None);
    }
    let entries = files
        .iter()
        .filter(|(rel, a)| rel.as_str() != FILE_NAME && a.use_as_dictionary.is_some())
        .map(|(rel, a)| {
            let sha =
                crate::model::dictionary::parse_available_dictionary(&format!(":{}:", a.sha256))
                    .ok_or_else(|| refused(manifest, format!("{rel}: sha256 is not base64")))?;
            Ok(Listed {
                path: rel.clone(),
                sha256: crate::model::dictionary::hex(&sha),
                size: a.size,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let bytes = Published::new(entries).to_bytes();
    if blake3::hash(&bytes).to_hex().as_str() != listed.blake3 {
        return Err(refused(
            manifest,
            format!("{FILE_NAME} is not on disk, and the list the merged entries make is not the one the shards listed"),
        ));
    }
    Ok(Some(bytes))
}

/// A merge refused: about the manifest it would have written.
fn refused(manifest: &Path, detail: String) -> Error {
    Error::Shard {
        path: manifest.to_path_buf(),
        detail,
    }
}

/// The partial manifests beside `manifest`: all N shards of one split, each once.
fn find_partials(manifest: &Path) -> Result<Vec<(Shard, PathBuf)>> {
    let bad = |detail: String| refused(manifest, detail);
    let folder = manifest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut found: Vec<(Shard, PathBuf)> = Vec::new();
    let entries = std::fs::read_dir(folder).map_err(|source| Error::Read {
        path: folder.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        let name = e.file_name();
        if let Some(s) = name.to_str().and_then(|n| partial_of(manifest, n)) {
            found.push((s, e.path()));
        }
    }
    found.sort_by_key(|(s, _)| (s.count, s.index));
    let Some(&(first, _)) = found.first() else {
        return Err(bad(format!(
            "no partial manifests ({}.shard-K-of-N.json) in {}: run `precompress DIR --shard K/N` for each shard and bring their outputs here first",
            manifest.file_stem().unwrap_or_default().to_string_lossy(),
            folder.display()
        )));
    };
    let n = first.count;
    if let Some((s, p)) = found.iter().find(|(s, _)| s.count != n) {
        return Err(bad(format!(
            "{} is shard {s} but {} is of {n} shards: partials of two different splits",
            p.display(),
            found[0].1.display()
        )));
    }
    let missing: Vec<String> = (1..=n)
        .filter(|k| !found.iter().any(|(s, _)| s.index == *k))
        .map(|k| format!("{k}/{n}"))
        .collect();
    if !missing.is_empty() {
        return Err(bad(format!(
            "shard {} missing: bring back every shard's output before merging",
            missing.join(", ")
        )));
    }

    Ok(found)
}

/// Reads the partials and checks they are one run's: the same tree, jobs and
/// settings, no errors, and every job run by exactly one shard.
fn read_partials(manifest: &Path, found: Vec<(Shard, PathBuf)>) -> Result<Vec<(PathBuf, Partial)>> {
    let bad = |detail: String| refused(manifest, detail);
    let partials: Vec<(PathBuf, Partial)> = found
        .into_iter()
        .map(|(s, p)| {
            let part = Partial::read(&p)?;
            if part.seal != part.sealed() {
                return Err(bad(format!(
                    "{} was edited after shard {s} wrote it (its seal does not match its content): run that shard again",
                    p.display()
                )));
            }
            if part.shard != s.index || part.of != s.count {
                return Err(bad(format!(
                    "{} says it is shard {}/{}, its name says {s}",
                    p.display(),
                    part.shard,
                    part.of
                )));
            }
            Ok((p, part))
        })
        .collect::<Result<_>>()?;
    let (p0, first) = &partials[0];
    for (p, part) in &partials[1..] {
        let differs = if part.tree != first.tree {
            Some("tree (the assets or their content) or settings")
        } else if part.jobs != first.jobs {
            Some("set of jobs")
        } else if part.manifest.settings != first.manifest.settings {
            Some("settings")
        } else if part.manifest.base != first.manifest.base {
            Some("base path")
        } else if part.manifest.shared_dictionary != first.manifest.shared_dictionary {
            Some("shared dictionary")
        } else if part.manifest.documents_dictionary != first.manifest.documents_dictionary {
            Some("documents dictionary")
        } else {
            None
        };
        if let Some(what) = differs {
            return Err(bad(format!(
                "{} and {} were run on a different {what}: run every shard on the same build",
                p0.display(),
                p.display()
            )));
        }
    }
    // `Manifest::new` stamps this precompress: the shards' must be the same.
    let this = Manifest::new(BTreeMap::new()).generator;
    if first.manifest.generator != this {
        return Err(bad(format!(
            "{}: the shards were run by {}, this is {this}: merge with the same version",
            p0.display(),
            first.manifest.generator
        )));
    }
    for (p, part) in &partials {
        if part.errors > 0 {
            return Err(bad(format!(
                "{}: shard {}/{} had {} error(s); run it again",
                p.display(),
                part.shard,
                part.of,
                part.errors
            )));
        }
    }
    let mut owner: BTreeMap<&String, u32> = BTreeMap::new();
    for (_, part) in &partials {
        for k in &part.owned {
            if let Some(other) = owner.insert(k, part.shard) {
                return Err(bad(format!(
                    "job {} was run by shard {other} and shard {}",
                    k.replace('\t', " "),
                    part.shard
                )));
            }
        }
    }
    if digest_keys(owner.keys().copied()) != first.jobs {
        return Err(bad(
            "the shards' jobs do not add up to the run's: a partial manifest was edited or comes from another version".into(),
        ));
    }

    Ok(partials)
}

/// Every asset with the representations of all shards.
fn union_assets(
    manifest: &Path,
    partials: &[(PathBuf, Partial)],
) -> Result<BTreeMap<String, Asset>> {
    let bad = |detail: String| refused(manifest, detail);
    let mut files: BTreeMap<String, Asset> = BTreeMap::new();
    for (p, part) in partials {
        for (rel, a) in &part.manifest.files {
            match files.get_mut(rel) {
                None => {
                    files.insert(rel.clone(), a.clone());
                }
                Some(m) => {
                    union(m, a).map_err(|why| bad(format!("{}: {rel}: {why}", p.display())))?
                }
            }
        }
    }
    for (p, part) in partials {
        if part.manifest.files.len() != files.len() {
            return Err(bad(format!(
                "{} lists {} assets, the shards together {}: run every shard on the same build",
                p.display(),
                part.manifest.files.len(),
                files.len()
            )));
        }
    }

    Ok(files)
}

/// Every asset, variant and delta listed is on disk in `root` as listed: its
/// blake3 and size, and every field that follows from the files (an ETag
/// from its blake3, a variant's coding from its path, a delta's coding and
/// dictionary from its path and header, an asset's SHA-256 and content
/// type), so no field merge writes is one it only took on trust.
fn on_disk(root: &Path, manifest: &Path, files: &BTreeMap<String, Asset>) -> Result<()> {
    let bad = |detail: String| refused(manifest, detail);
    let listed: Vec<(&String, &Asset)> = files.iter().collect();
    let wrong: Vec<String> = listed
        .par_iter()
        .filter_map(|(rel, a)| verify_asset(root, rel, a).err())
        .collect();
    if let Some(w) = wrong.first() {
        return Err(bad(format!(
            "{w}{}",
            if wrong.len() > 1 {
                format!(" (and {} more)", wrong.len() - 1)
            } else {
                String::new()
            }
        )));
    }
    Ok(())
}

/// A file's blake3, SHA-256, size and first bytes (a delta's header).
struct OnDisk {
    blake3: String,
    sha256: [u8; 32],
    size: u64,
    head: Vec<u8>,
}

fn read_on_disk(path: &Path) -> std::io::Result<OnDisk> {
    use std::io::Read;
    let mut f = crate::fsutil::open_to_read(path)?;
    let mut b3 = blake3::Hasher::new();
    let mut sha = <sha2::Sha256 as sha2::Digest>::new();
    let (mut size, mut head) = (0u64, Vec::new());
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        b3.update(&buf[..n]);
        sha2::Digest::update(&mut sha, &buf[..n]);
        if head.len() < 64 {
            head.extend_from_slice(&buf[..n.min(64 - head.len())]);
        }
        size += n as u64;
    }
    Ok(OnDisk {
        blake3: b3.finalize().to_hex().to_string(),
        sha256: sha2::Digest::finalize(sha).into(),
        size,
        head,
    })
}

/// What is wrong with the asset `rel` as a partial lists it, if anything.
fn verify_asset(root: &Path, rel: &str, a: &Asset) -> std::result::Result<(), String> {
    use base64::Engine;
    let read = |p: &str| {
        let path = root.join(p);
        read_on_disk(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let same = |what: &str, p: &str, b3: &str, size: u64, etag: &str, d: &OnDisk| {
        if d.blake3 != b3 || d.size != size {
            return Err(format!(
                "{}: not the content the shards recorded ({what})",
                root.join(p).display()
            ));
        }
        if etag != crate::model::manifest::etag(b3) {
            return Err(format!(
                "{rel}: the {what}'s etag {etag} is not its blake3's"
            ));
        }
        Ok(())
    };
    let src = read(rel)?;
    same("asset", rel, &a.blake3, a.size, &a.etag, &src)?;
    if a.sha256 != base64::engine::general_purpose::STANDARD.encode(src.sha256) {
        return Err(format!("{rel}: sha256 is not the file's"));
    }
    if a.content_type != crate::model::content::content_type(rel) {
        return Err(format!(
            "{rel}: content_type {:?} is not its name's",
            a.content_type
        ));
    }
    for v in &a.encodings {
        let coding = Codec::parse(&v.coding).filter(|c| c.token() == v.coding);
        if coding.map(|c| variant_path(rel, c)) != Some(v.path.clone()) {
            return Err(format!("{rel}: a {:?} variant at {}", v.coding, v.path));
        }
        same(
            &v.coding,
            &v.path,
            &v.blake3,
            v.size,
            &v.etag,
            &read(&v.path)?,
        )?;
    }
    for d in &a.deltas {
        let sha = crate::model::dictionary::parse_available_dictionary(&d.dictionary);
        let coding = DeltaCoding::parse(&d.coding);
        let (Some(sha), Some(coding)) = (sha, coding) else {
            return Err(format!(
                "{rel}: delta {} has no valid coding or dictionary",
                d.path
            ));
        };
        if crate::model::names::delta_path(rel, &sha, coding) != d.path {
            return Err(format!(
                "{rel}: delta {} is not the {} against {}",
                d.path, d.coding, d.dictionary
            ));
        }
        let on = read(&d.path)?;
        if coding.header_hash(&on.head) != Some(sha) {
            return Err(format!(
                "{rel}: delta {}'s header does not name {}",
                d.path, d.dictionary
            ));
        }
        same(&d.coding, &d.path, &d.blake3, d.size, &d.etag, &on)?;
    }
    Ok(())
}

/// Adds `b`'s representations to `a`'s (the same asset as another shard saw it).
fn union(a: &mut Asset, b: &Asset) -> std::result::Result<(), String> {
    if (
        &a.blake3,
        &a.sha256,
        a.size,
        &a.content_type,
        &a.use_as_dictionary,
    ) != (
        &b.blake3,
        &b.sha256,
        b.size,
        &b.content_type,
        &b.use_as_dictionary,
    ) {
        return Err("the shards saw different content: run every shard on the same build".into());
    }
    for v in &b.encodings {
        match a.encodings.iter().find(|x| x.coding == v.coding) {
            Some(x) if x == v => {}
            Some(_) => return Err(format!("two different {} variants", v.coding)),
            None => a.encodings.push(v.clone()),
        }
    }
    for d in &b.deltas {
        match a.deltas.iter().find(|x| x.path == d.path) {
            Some(x) if x == d => {}
            Some(_) => return Err(format!("two different deltas {}", d.path)),
            None => a.deltas.push(d.clone()),
        }
    }
    for (coding, why) in &b.skipped {
        match a.skipped.get(coding) {
            Some(x) if x == why => {}
            Some(_) => return Err(format!("two reasons for no {coding} variant")),
            None => {
                a.skipped.insert(coding.clone(), *why);
            }
        }
    }
    for s in &b.skipped_deltas {
        if !a.skipped_deltas.contains(s) {
            a.skipped_deltas.push(s.clone());
        }
    }
    Ok(())
}
