// precompress {version}: CloudFront Function, runtime cloudfront-js-2.0, viewer response
// (precompress objects DIR --edge cloudfront-response), paired with --edge cloudfront on viewer
// request. Turns the metadata the upload stored (x-amz-meta-precompress-*) into the headers S3
// cannot store: the manifest's ETag (S3's own is an MD5), Vary, Use-As-Dictionary, Link;
// the 404 page's status; no Accept-Ranges on a compressed body; nosniff; and for a page kept as
// its next version's dictionary, the Cache-Control a Chromium navigation may keep it by
// (serve::keeps_page: Sec-Fetch-Dest document and a Sec-CH-UA field; the object itself is
// stored no-cache, which is what CloudFront caches by).
function handler(event) {
  var s = event.response, h = s.headers, p = "x-amz-meta-precompress-", n = ["etag", "vary", "use-as-dictionary", "link"], i, v;
  for (i = 0; i < n.length; i++) {
    v = h[p + n[i]];
    if (v) { h[n[i]] = {value: v.value}; delete h[p + n[i]]; }
  }
  v = h[p + "status"];
  if (v) {
    if (v.value === "404") { s.statusCode = 404; s.statusDescription = "Not Found"; }
    delete h[p + "status"];
  }
  v = h[p + "page"];
  if (v) {
    var q = event.request.headers, d = q["sec-fetch-dest"];
    if (d && d.value.trim().toLowerCase() === "document" && q["sec-ch-ua"]) h["cache-control"] = {value: v.value};
    delete h[p + "page"];
  }
  if (h["content-encoding"]) delete h["accept-ranges"];
  h["x-content-type-options"] = {value: "nosniff"};
  return s;
}
