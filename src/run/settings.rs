//! The settings as the disk and the encoders see them, before a run opens
//! anything: DIR, where the manifest and the cache go, and the earlier
//! releases' folders checked (a usage error names the setting and the
//! path); and what the encoders make of the levels (the settings string the
//! manifest records of each coding, the delta encoder).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::config::Config;
use crate::encode::delta::{DeltaEncoder, DeltaLevels};
use crate::encode::new_encoder;
use crate::error::{Error, Result};
use crate::fsutil::probe_writable;
use crate::run::state::cache::Cache;

/// The encoder settings string of each coding, as recorded in the manifest
/// (`dcb` and `dcz` always: [`crate::model::manifest::Manifest::prune_delta_settings`] drops them from a
/// manifest with no delta of theirs).
pub fn settings_of(cfg: &Config) -> Result<BTreeMap<String, String>> {
    let mut settings = cfg
        .codecs
        .iter()
        .map(|&c| {
            let enc = new_encoder(c, cfg.levels).map_err(|e| {
                Error::Config(format!("cannot start the {} encoder: {e}", c.token()))
            })?;
            let mut s = enc.settings();
            if cfg.min_ratio < 1.0 {
                // A variant kept at one ratio may not be at another.
                s.push_str(&format!("; kept at most {} of the source", cfg.min_ratio));
            }
            Ok((c.token().to_string(), s))
        })
        .collect::<Result<BTreeMap<_, _>>>()?;
    // Always: a shared dictionary's members get deltas against it even in a
    // first release. The manifest keeps only those of codings it has deltas of.
    let enc = delta_encoder(cfg);
    for &c in &cfg.delta_codings {
        settings.insert(c.token().to_string(), enc.settings(c));
    }
    Ok(settings)
}

/// The delta encoders run at the levels of their codecs, except that `dcb`
/// stops at quality 10. Measured with `bash bench/deltas.sh` (9 files of 6
/// npm release pairs): at q11 the run with `--dictionary-from` took 1.74x the
/// CPU of the run without, almost all of it echarts' 3.4 MB minor release
/// (4.4 s at q11, 1.6 s at q10 for a 3.9% larger delta); on patch releases
/// q10 and q11 gave the same few hundred bytes in the same time.
pub(crate) fn delta_encoder(cfg: &Config) -> DeltaEncoder {
    DeltaEncoder::new(DeltaLevels {
        brotli_quality: cfg.levels.brotli_quality.min(10),
        zstd_level: cfg.levels.zstd_level,
    })
}

/// Fails with a write error naming the folder unless DIR, the manifest's
/// folder and the cache can all be written.
pub(crate) fn probe_folders(
    root: &Path,
    manifest_path: &Path,
    cache: Option<&Cache>,
) -> Result<()> {
    let mut folders = vec![root.to_path_buf()];
    folders.extend(manifest_path.parent().map(Path::to_path_buf));
    folders.extend(cache.map(|c| c.dir().to_path_buf()));
    for dir in folders {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        probe_writable(&dir)?;
    }
    Ok(())
}

/// Refuses a `root` that is missing or not a folder (a usage error).
pub(crate) fn check_root(cfg: &Config) -> Result<()> {
    let root = cfg.root.as_path();
    if !root.exists() {
        return Err(crate::Error::Config(format!(
            "{}: no such folder{}",
            root.display(),
            backslash_hint(&root.to_string_lossy())
        )));
    }
    if !root.is_dir() {
        return Err(crate::Error::Config(format!(
            "{}: not a folder",
            root.display()
        )));
    }
    Ok(())
}

/// Refuses a `root` that looks like a project root rather than a build's
/// output, unless `--allow-project-root` (a usage error): `precompress .`
/// would compress node_modules/ and src/ along with the site.
pub(crate) fn check_not_project_root(cfg: &Config) -> Result<()> {
    let root = cfg.root.as_path();
    let holds = |name: &str, dir: bool| {
        let p = root.join(name);
        if dir {
            p.is_dir()
        } else {
            p.is_file()
        }
    };
    let marks: Vec<&str> = [("package.json", false), ("node_modules/", true)]
        .into_iter()
        .filter(|(name, dir)| holds(name.trim_end_matches('/'), *dir))
        .map(|(name, _)| name)
        .collect();
    if !marks.is_empty() && !cfg.allow_project_root {
        return Err(crate::Error::Config(format!(
            "{}: looks like a project root, not a build's output (it holds {}): every file under it would be compressed and listed, node_modules/ and src/ too. Pass the folder the build writes (dist/, build/, out/, public/), or --allow-project-root if this folder is what you serve",
            root.display(),
            marks.join(" and ")
        )));
    }
    Ok(())
}

/// What to say of a missing DIR whose name holds a backslash: outside
/// Windows it is a character of the name, not a separator (`'dist\'` is
/// the folder named `dist\`).
fn backslash_hint(root: &str) -> String {
    if cfg!(windows) || !root.contains('\\') {
        return String::new();
    }
    format!(
        " (a backslash is part of a name here, not a separator: did you mean {}?)",
        root.replace('\\', "/")
    )
}

/// Refuses a run that would write where it must not (a configuration
/// error, exit 2, before anything is written). The rules, in docs/caching.md's
/// "Nothing but its own files is written": `--manifest` names a new file or
/// a precompress manifest ([`crate::model::manifest::may_replace`]), never a
/// source or any other file; nothing is written inside an earlier release
/// (`--manifest`, `--cache-dir`); an earlier release is neither DIR, nor
/// inside it (it would be published and compressed with the new one), nor
/// around it; the cache folder is neither DIR nor around it
/// ([`check_cache_dir`]).
pub(crate) fn check_outputs(cfg: &Config) -> Result<()> {
    let bad = |e: String| crate::Error::Config(e);
    let manifest = cfg.manifest_path();
    let default = crate::model::manifest::default_path(&cfg.root);
    if let Some(given) = cfg
        .manifest
        .as_ref()
        .filter(|m| crate::fsutil::canonical(m) != crate::fsutil::canonical(&default))
    {
        crate::model::manifest::may_replace(given)
            .map_err(|why| bad(format!("--manifest {}: {why}", given.display())))?;
    }
    let dir = crate::fsutil::canonical(&cfg.root);
    let canon_manifest = crate::fsutil::canonical(&manifest);
    if let Some(cache) = &cfg.cache_dir {
        check_cache_dir(cache, &cfg.root)?;
    }
    let canon_cache = cfg.cache_dir.as_deref().map(crate::fsutil::canonical);
    for prev in &cfg.dictionary_from {
        // Missing, not a folder, DIR itself: said first, as such.
        let p = crate::run::state::releases::check_folder(prev, Some(&dir))?;
        let named = |what: &str| format!("--dictionary-from {}: {what}", prev.display());
        if p.starts_with(&dir) {
            return Err(bad(named("is inside DIR: the earlier release would be compressed and published with the new one; keep it outside DIR")));
        }
        if dir.starts_with(&p) {
            return Err(bad(named("holds DIR: this run would write into the earlier release; keep the two side by side")));
        }
        if canon_manifest.starts_with(&p) {
            return Err(bad(format!(
                "--manifest {}: inside the earlier release {}, which precompress never modifies",
                manifest.display(),
                prev.display()
            )));
        }
        if canon_cache
            .as_ref()
            .is_some_and(|c| c.starts_with(&p) || p.starts_with(c))
        {
            return Err(bad(format!(
                "--cache-dir {}: overlaps the earlier release {}, which precompress never modifies",
                cfg.cache_dir.as_deref().unwrap_or(Path::new("")).display(),
                prev.display()
            )));
        }
    }
    Ok(())
}

/// Refuses a `--cache-dir` that is DIR or holds it (a configuration error):
/// the cache's entries and the release store would be written among the
/// site's files, to be listed and published as its assets, and the cache's
/// clean-up, which walks its own folder, would reach into DIR. A cache
/// folder inside DIR is fine: the walk leaves it out ([`not_assets`]).
pub(crate) fn check_cache_dir(cache: &Path, root: &Path) -> Result<()> {
    let (canon_cache, dir) = (
        crate::fsutil::canonical(cache),
        crate::fsutil::canonical(root),
    );
    if !dir.starts_with(&canon_cache) {
        return Ok(());
    }
    let why = if canon_cache == dir {
        "is DIR: the cache and the release store would be written among the site's \
         files, listed and published as its assets"
    } else {
        "holds DIR: the cache's clean-up walks its folder, DIR included, and could \
         take the site's files for its own"
    };
    Err(Error::Config(format!(
        "--cache-dir {}: {why} (DIR is {}); keep the cache outside DIR, or in a \
         folder inside it, which the run leaves out",
        cache.display(),
        root.display()
    )))
}
