//! Sharding a run across CI jobs (`--shard K/N`) and merging their outputs
//! (`precompress merge`). Owns the split of a run's jobs between shards, the
//! partial manifest each shard writes, and the checks and union that turn N
//! partial manifests into the manifest one run would have written.
//!
//! The split is a pure function of the planned jobs and their costs, so every
//! shard computes the same one without talking to the others. It never
//! decides what a job writes (the run does) and merge never compresses: it
//! only checks, unions, settles and writes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::coding::{Codec, DeltaCoding};
use crate::model::manifest::{Asset, Manifest};
use crate::run::plan::{Job, Unit};
use crate::run::scan::{Dict, Scanned};

/// The most shards a run can be split into.
pub const MAX_SHARDS: u32 = 256;

/// Shard `index` (1-based) of `count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Shard {
    /// Parses `K/N` (1 ≤ K ≤ N ≤ [`MAX_SHARDS`]).
    pub fn parse(s: &str) -> std::result::Result<Shard, String> {
        let bad = || {
            format!("invalid shard {s:?} (expected K/N with 1 <= K <= N <= {MAX_SHARDS}, e.g. 2/4)")
        };
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// One unit the split assigns: all jobs of one (asset, coding[, dictionary]),
/// so the parts of a split brotli stream stay in one shard. `cost` must not
/// depend on anything but the tree and the settings (not on a cache), or
/// shards would compute different splits.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Group {
    pub key: String,
    pub cost: u64,
}

/// The key of a group: the asset's path, the coding and, for a delta, the
/// dictionary's SHA-256 in hex.
pub fn group_key(rel: &str, coding: &str, dictionary: Option<&[u8; 32]>) -> String {
    let mut k = format!("{rel}\t{coding}");
    if let Some(d) = dictionary {
        k.push('\t');
        for b in d {
            k.push_str(&format!("{b:02x}"));
        }
    }
    k
}

/// The group key of a variant or delta path (`app.js.br`, `app.js.HEX.dcz`),
/// for telling which shard's a file on disk is.
pub fn group_of_path(path: &str) -> Option<String> {
    if let Some((src, coding)) = crate::model::dictionary::delta_source(path) {
        let hex = &path[src.len() + 1..src.len() + 65];
        return Some(format!("{src}\t{}\t{hex}", coding.token()));
    }
    let (src, codec) = crate::model::content::variant_source(path)?;
    Some(group_key(src, codec.token(), None))
}

/// The shard (1-based) of each distinct group key. Longest first, each goes
/// to its home shard (from a hash of its key) while that shard stays within
/// 4% of an even share, else to the shard with the least cost so far
/// (lowest index on a tie): the shards finish close together, and a group
/// keeps its shard when the tree changes a little, so a shard's own
/// `--cache-dir` still holds its jobs on the next run. Deterministic: depends
/// only on the keys and costs.
pub fn split(groups: &[Group], count: u32) -> BTreeMap<String, u32> {
    let mut sorted: Vec<&Group> = groups.iter().collect();
    sorted.sort_by(|a, b| b.cost.cmp(&a.cost).then_with(|| a.key.cmp(&b.key)));
    sorted.dedup_by(|a, b| a.key == b.key);
    let n = count as u64;
    let total: u64 = sorted.iter().map(|g| g.cost.max(1)).sum();
    let cap = total / n + (total / n) / SLACK + 1;
    let mut load = vec![0u64; count as usize];
    let mut owner = BTreeMap::new();
    for g in sorted {
        let cost = g.cost.max(1);
        let hash = blake3::hash(g.key.as_bytes());
        let home =
            (u64::from_le_bytes(hash.as_bytes()[..8].try_into().expect("8 bytes")) % n) as usize;
        let i = if load[home] + cost <= cap {
            home
        } else {
            load.iter()
                .enumerate()
                .min_by_key(|&(i, l)| (*l, i))
                .expect("count >= 1")
                .0
        };
        load[i] += cost;
        owner.insert(g.key.clone(), i as u32 + 1);
    }
    owner
}

/// A shard takes groups at home up to 1/SLACK (4%) over an even share.
const SLACK: u64 = 25;

/// A digest of a set of group keys (sorted, each once): equal in every shard
/// of one split, and equal to the digest of the union of what they owned.
pub fn digest_keys<'a>(keys: impl IntoIterator<Item = &'a String>) -> String {
    let set: BTreeSet<&String> = keys.into_iter().collect();
    let mut h = blake3::Hasher::new();
    for k in set {
        h.update(k.as_bytes());
        h.update(b"\n");
    }
    h.finalize().to_hex().to_string()
}

/// What one shard writes beside where the manifest goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Partial {
    /// The shard, 1-based.
    pub shard: u32,
    /// How many shards.
    pub of: u32,
    /// Digest of every group key of the whole run (see [`digest_keys`]).
    pub jobs: String,
    /// Digest of the tree: every asset's path and blake3, and the settings.
    pub tree: String,
    /// The groups this shard ran.
    pub owned: Vec<String>,
    /// Per-file errors the shard had; a partial with errors cannot be merged.
    pub errors: u64,
    /// The shard's manifest: every asset, with what this shard's jobs wrote
    /// (and what the previous run left), deltas not yet weighed against the
    /// other shards' variants.
    pub manifest: Manifest,
    /// blake3 of the partial as written with an empty seal: a partial edited
    /// afterwards (a reason, a coding, an ETag) is refused by `merge`. Like
    /// the cache's keyed hashes this catches edits, not a forger who knows
    /// the format; what can be derived from the files is checked as well.
    #[serde(default)]
    pub seal: String,
}

/// The tree digest a shard records: assets by path with their blake3, and the settings.
pub fn tree_digest<'a>(
    assets: impl IntoIterator<Item = (&'a str, &'a str)>,
    settings: &BTreeMap<String, String>,
) -> String {
    let mut sorted: Vec<(&str, &str)> = assets.into_iter().collect();
    sorted.sort();
    let mut h = blake3::Hasher::new();
    for (rel, b3) in sorted {
        h.update(rel.as_bytes());
        h.update(b"\t");
        h.update(b3.as_bytes());
        h.update(b"\n");
    }
    for (k, v) in settings {
        h.update(format!("{k}={v}\n").as_bytes());
    }
    h.finalize().to_hex().to_string()
}

/// `precompress-manifest.shard-2-of-4.json` beside `precompress-manifest.json`:
/// N of them can sit side by side when the shards' outputs come back.
pub fn partial_path(manifest: &Path, shard: Shard) -> PathBuf {
    let stem = manifest
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    manifest.with_file_name(format!(
        "{stem}.shard-{}-of-{}.json",
        shard.index, shard.count
    ))
}

/// The shard a file name names, if it is a partial manifest of `manifest`.
pub fn partial_of(manifest: &Path, name: &str) -> Option<Shard> {
    let stem = manifest.file_stem()?.to_str()?;
    let rest = name.strip_prefix(stem)?.strip_prefix(".shard-")?;
    let rest = rest.strip_suffix(".json")?;
    let (k, n) = rest.split_once("-of-")?;
    Shard::parse(&format!("{k}/{n}")).ok()
}

impl Partial {
    /// The seal of this partial's content (its own `seal` left out).
    fn sealed(&self) -> String {
        let unsealed = Partial {
            seal: String::new(),
            ..self.clone()
        };
        let json = serde_json::to_vec(&unsealed).expect("plain data");
        blake3::hash(&json).to_hex().to_string()
    }

    /// Writes it atomically, sealed.
    pub fn write(&self, path: &Path) -> Result<()> {
        let sealed = Partial {
            seal: self.sealed(),
            ..self.clone()
        };
        let mut s = serde_json::to_string_pretty(&sealed).expect("plain data");
        s.push('\n');
        crate::fsutil::write_atomic(path, s.as_bytes(), None)
    }

    fn read(path: &Path) -> Result<Partial> {
        let bytes = crate::fsutil::read_regular(path, crate::model::manifest::MAX_SIZE).map_err(
            |source| Error::Read {
                path: path.to_path_buf(),
                source,
            },
        )?;
        serde_json::from_slice(&bytes).map_err(|e| Error::Manifest {
            path: path.to_path_buf(),
            detail: format!("not a shard's partial manifest: {e}"),
        })
    }
}

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
}

/// Merges the partial manifests found beside `manifest` into it: checks that
/// they are N distinct shards of one split of one tree with the same settings
/// and no errors, that together they ran every job once, and that every
/// asset, variant and delta they list is on disk in `root` with its hash; then
/// writes the manifest one run would have written and removes the partials.
/// Anything wrong: an error and nothing written.
pub fn merge(root: &Path, manifest: &Path) -> Result<Merged> {
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
    on_disk(root, manifest, &files)?;
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
    Ok(Merged {
        shards: n,
        assets: out.files.len(),
        variants: out.files.values().map(|a| a.encodings.len()).sum(),
        deltas: out.files.values().map(|a| a.deltas.len()).sum(),
        removed,
        manifest: manifest.to_path_buf(),
    })
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
        if coding.map(|c| format!("{rel}.{}", c.suffix())) != Some(v.path.clone()) {
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
        if crate::model::dictionary::delta_path(rel, &sha, coding) != d.path {
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

/// `--shard K/N`: keeps the jobs of shard K only, the split computed the
/// same way in every shard ([`shard::split`]) from every unit the settings
/// ask for, costed by what making it would take ([`unit_cost`]), whatever is
/// already on disk: shards run one after another in one folder, or a shard
/// run again, split as the first did. Returns the shard, the digest of all
/// units, the ones kept, and the owner of each.
pub(crate) fn take_shard(
    s: Shard,
    units: &[Unit],
    jobs: &mut Vec<Job>,
    files: &[Scanned],
    dicts: &[Dict],
) -> (Shard, String, Vec<String>, BTreeMap<String, u32>) {
    let key = |file: usize, token: &str, dict: Option<usize>| {
        group_key(
            &files[file].found.rel,
            token,
            dict.map(|d| &dicts[d].sha256),
        )
    };
    let groups: Vec<Group> = units
        .iter()
        .map(|u| Group {
            key: key(u.file, u.token, u.dict),
            cost: unit_cost(u, files, dicts),
        })
        .collect();
    let owner = split(&groups, s.count);
    let digest = digest_keys(owner.keys());
    let owned: Vec<String> = owner
        .iter()
        .filter(|(_, &k)| k == s.index)
        .map(|(key, _)| key.clone())
        .collect();
    jobs.retain(|j| owner.get(&key(j.file, j.token(), j.dict())) == Some(&s.index));
    (s, digest, owned, owner)
}

/// What making a unit costs, for the shard split: its bytes in (a delta's
/// dictionary too) times its coding's relative cost.
pub(crate) fn unit_cost(u: &Unit, files: &[Scanned], dicts: &[Dict]) -> u64 {
    let size = files[u.file].size;
    match u.dict {
        Some(d) => {
            let coding = DeltaCoding::parse(u.token).expect("a delta unit's token");
            (size + dicts[d].old.size) * coding.cost_weight()
        }
        None => {
            size * Codec::parse(u.token)
                .expect("a variant unit's token")
                .cost_weight()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(costs: &[u64]) -> Vec<Group> {
        costs
            .iter()
            .enumerate()
            .map(|(i, &cost)| Group {
                key: format!("f{i:03}\tbr"),
                cost,
            })
            .collect()
    }

    #[test]
    fn shards_parse_and_refuse_nonsense() {
        assert_eq!(Shard::parse("2/4"), Ok(Shard { index: 2, count: 4 }));
        assert_eq!(
            Shard::parse(" 1 / 1 ").map(|s| s.to_string()),
            Ok("1/1".into())
        );
        for bad in ["0/4", "5/4", "4", "a/b", "1/0", "1/257", "-1/2", ""] {
            let e = Shard::parse(bad).unwrap_err();
            assert!(e.contains("K/N"), "{bad}: {e}");
        }
    }

    #[test]
    fn every_group_goes_to_exactly_one_shard_and_the_split_is_the_same_in_any_order() {
        let g = groups(&[50, 7, 300, 7, 120, 1, 0, 99, 64, 64]);
        let a = split(&g, 3);
        let mut reversed = g.clone();
        reversed.reverse();
        assert_eq!(a, split(&reversed, 3));
        assert_eq!(a.len(), g.len());
        assert!(a.values().all(|s| (1..=3).contains(s)));
    }

    #[test]
    fn the_split_balances_cost_not_count() {
        // One huge job and many small: the huge one's shard gets few others.
        let mut costs = vec![1000];
        costs.extend(std::iter::repeat_n(10, 100));
        let g = groups(&costs);
        let a = split(&g, 2);
        let l = loads(&g, &a, 2);
        assert!(l.iter().all(|&x| (960..=1041).contains(&x)), "{l:?}");
        let big = a[&g[0].key];
        let with_big = a.values().filter(|&&s| s == big).count();
        assert!(with_big <= 5, "{with_big} jobs beside the big one");
    }

    /// Costs like a site's: many small files, a few large (deterministic).
    fn site(n: usize, seed: u64) -> Vec<Group> {
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let r = (x >> 33) % 1000;
                let cost = if r < 5 {
                    2_000_000 + r * 1000
                } else {
                    1000 + (x >> 40) % 50_000
                };
                Group {
                    key: format!("assets/f{i:04}.js\tbr"),
                    cost,
                }
            })
            .collect()
    }

    fn loads(g: &[Group], a: &BTreeMap<String, u32>, n: u32) -> Vec<u64> {
        (1..=n)
            .map(|k| g.iter().filter(|x| a[&x.key] == k).map(|x| x.cost).sum())
            .collect()
    }

    #[test]
    fn shards_stay_within_a_few_percent_of_the_mean() {
        for n in [2, 3, 4, 8] {
            let g = site(3000, u64::from(n));
            let l = loads(&g, &split(&g, n), n);
            let mean = l.iter().sum::<u64>() as f64 / f64::from(n);
            let max = *l.iter().max().unwrap() as f64;
            assert!(max / mean < 1.06, "{n} shards: {l:?}");
        }
    }

    #[test]
    fn a_small_change_to_the_tree_moves_few_groups() {
        let g = site(3000, 7);
        let before = split(&g, 4);
        let mut changed = g.clone();
        changed.push(Group {
            key: "assets/new.js\tbr".into(),
            cost: 30_000,
        });
        changed[10].cost += 5_000;
        changed.remove(20);
        let after = split(&changed, 4);
        let moved = before
            .iter()
            .filter(|(k, s)| after.get(*k).is_some_and(|t| t != *s))
            .count();
        assert!(
            moved * 100 < g.len() * 5,
            "{moved} of {} groups moved",
            g.len()
        );
    }

    #[test]
    fn more_shards_than_jobs_leaves_some_empty() {
        let g = groups(&[5, 5]);
        let a = split(&g, 4);
        assert_eq!(
            a.values().copied().collect::<BTreeSet<_>>(),
            BTreeSet::from([1, 2])
        );
    }

    #[test]
    fn the_union_of_what_shards_owned_has_the_digest_of_the_whole() {
        let all: Vec<String> = (0..10).map(|i| format!("k{i}")).collect();
        let (a, b): (Vec<&String>, Vec<&String>) =
            all.iter().partition(|k| k.ends_with(['1', '3', '5']));
        assert_eq!(digest_keys(a.into_iter().chain(b)), digest_keys(&all));
        assert_ne!(digest_keys(&all[1..]), digest_keys(&all));
    }

    #[test]
    fn partial_names_sit_side_by_side_and_are_recognised() {
        let m = Path::new("dist/precompress-manifest.json");
        let p = partial_path(m, Shard { index: 3, count: 4 });
        assert_eq!(p, Path::new("dist/precompress-manifest.shard-3-of-4.json"));
        assert_eq!(
            partial_of(m, "precompress-manifest.shard-3-of-4.json"),
            Some(Shard { index: 3, count: 4 })
        );
        for not in [
            "precompress-manifest.json",
            "precompress-manifest.shard-5-of-4.json",
            "other.shard-1-of-2.json",
            "precompress-manifest.shard-1-of-2.json.br",
        ] {
            assert_eq!(partial_of(m, not), None, "{not}");
        }
    }
}
