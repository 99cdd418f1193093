// precompress {version}: CloudFront Function (runtime cloudfront-js-2.0) for viewer request,
// from `precompress objects DIR --edge cloudfront`; `--edge cloudfront-response` goes on viewer
// response. Rewrites the URI to the object precompress serve would send: Accept-Encoding by
// weight, then size; RFC 9842 deltas; / /docs/ /about as index.html docs/index.html about.html.
// Cache policy: no headers, cookies or query strings; Compress off. It lists this release's
// files: publish it again on every deploy.
/*DATA*/
var V={b:"br",z:"zstd",g:"gzip"},X={b:".br",z:".zst",g:".gz"},W={b:"dcb",z:"dcz"};
function handler(ev){
var r=ev.request,u=r.uri,p=u,k=[],e,i,s;
// Only GET and HEAD, whatever the behavior lets through.
if(r.method!=="GET"&&r.method!=="HEAD")return re(405,"Method Not Allowed",{allow:"GET, HEAD"});
// Outside the base: not ours; the base without its slash: redirected to it.
if(B!=="/"){if(u.slice(0,B.length-1)!==B.slice(0,-1))return r;p=u.slice(B.length-1);if(!p)return re(301,"Moved Permanently",{location:u+"/"+qs(r.querystring)})}
if(p.charAt(0)!=="/")return r;
// As serve::path: each segment decoded alone; `.`, `..`, `/`, `\`, NUL or bad
// percent-encoding: 400; a dot-file (but .well-known): the 404 page. The first wins.
var g=p.slice(1).split("/");
for(i=0;i<g.length;i++){try{s=decodeURIComponent(g[i])}catch(x){return re(400,"Bad Request",{})}
if(s==="."||s===".."||/[\/\\\0]/.test(s))return re(400,"Bad Request",{});
if(s.charAt(0)==="."&&s!==".well-known")return nf(r);
if(s)k.push(s)}
var key=k.join("/"),end=p.slice(-1)==="/",ix=key?key+"/index.html":"index.html";
// A file (with a slash after it: 404); a folder's index.html (once the folder has its
// slash); NAME.html for NAME when NAME has no dot.
if((e=get(key))!==undefined)return end?nf(r):pick(key,e,r);
if((e=get(ix))!==undefined)return key&&!end?re(301,"Moved Permanently",{location:B+p.replace(/^\/+/,"")+"/"+qs(r.querystring)}):pick(ix,e,r);
if(key&&!end&&k[k.length-1].indexOf(".")<0&&(e=get(key+".html"))!==undefined)return pick(key+".html",e,r);
// A variant or delta by its own name, or the manifest: the 404 page. Anything else goes on.
// [\s\S], not `.`: a name may hold a newline, CR or U+2028 (no `s` flag in ES5).
var v=/^([\s\S]+)\.(br|zst|gz|[0-9a-f]{64}\.dc[bz])$/.exec(key);
return key===M||(v&&get(v[1])!==undefined)?nf(r):r}
// The route of the asset at k, or undefined.
function get(k){var i=k.lastIndexOf("/")+1,d=k.slice(0,i),n=k.slice(i),f=A.hasOwnProperty(d)?A[d]:[],j;
for(j=0;j<f.length;j+=2)if(f[j]===n)return f[j+1]}
function nf(r){var e=get(P);return e===undefined?re(404,"Not Found",{}):pick(P,e,r)}
// The representation of asset `key` (route e) for r: r with its URI rewritten, or a 406.
// Candidates as Entry::select_with_dictionary: the variants, then the deltas against
// the dictionary held (a repeated Available-Dictionary is none; only a listed hash matches).
function pick(key,e,r){var h=r.headers,t=e.split(" "),c=[],nv=0,nd=0,d=h["available-dictionary"],a=h["accept-encoding"],m,i,b,x;
// The code dictionary asked by Chromium (Sec-CH-UA) holding no dictionary (none, repeated, or
// no hash): 204, stored nowhere, so it asks again once it holds the chunk it is a delta against.
if(key===N&&h["sec-ch-ua"]&&(!d||d.multiValue||!/^:[A-Za-z0-9+\/]{42}[AEIMQUYcgkosw048]=:$/.test(d.value.replace(/^[ \t]+|[ \t]+$/g,""))))return re(204,"No Content",{"cache-control":"no-store"});
d=!d||d.multiValue?-1:D.indexOf(d.value.replace(/^[ \t]+|[ \t]+$/g,""));
for(i=1;i<t.length;i++){m=/^(\d*)([bzg])(\d+)$/.exec(t[i]);
if(!m[1]){nv++;c.push([V[m[2]],+m[3],0,X[m[2]]])}
else{nd++;if(+m[1]===d)c.push([W[m[2]],+m[3],1,"."+Buffer.from(D[d].slice(1,-1),"base64").toString("hex")+"."+W[m[2]]])}}
// No Accept-Encoding: identity. Repeated fields are joined with commas.
b=a===undefined?[0,0,0]:choose(weights(a.multiValue?a.multiValue.map(function(y){return y.value}).join(","):a.value),+t[0],c);
if(!b){x={"cache-control":"no-cache"};if(nd||nv)x.vary=nd?"Accept-Encoding, Available-Dictionary":"Accept-Encoding";return re(406,"Not Acceptable",x)}
r.uri=B+key.split("/").map(encodeURIComponent).join("/")+(b[2]?b[2][3]:"");return r}
// As negotiate::AcceptEncoding::parse: {" token": weight in thousandths}, the first listing of
// each token, from the first 64 parts; a part off the grammar (token [; q=qvalue]) is skipped.
function weights(v){var w={},p=v.split(",").slice(0,64),i,x,t,q,m;
for(i=0;i<p.length;i++){x=p[i].split(";");t=x[0].replace(/^[ \t]+|[ \t]+$/g,"");q=1000;
if(x.length>2||!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(t))continue;
if(x.length>1){m=/^[ \t]*q[ \t]*=[ \t]*(?:0(?:\.([0-9]{0,3}))?|(1)(?:\.0{0,3})?)[ \t]*$/i.exec(x[1]);if(!m)continue;q=m[2]?1000:+((m[1]||"")+"00").slice(0,3)}
t=" "+t.toLowerCase();if(t===" x-gzip")t=" gzip";if(w[t]===undefined)w[t]=q}
return w}
// As negotiate::choose: the highest weight, then the smallest, then the first; identity
// neither named nor covered by `*` ranks below every named coding; `*` never covers a delta.
function choose(w,id,c){var q=w[" identity"],b,i,x;if(q===undefined)q=w[" *"];b=q===0?null:[q===undefined?0.5:q,id,0];
for(i=0;i<c.length;i++){x=c[i];q=w[" "+x[0]];if(q===undefined)q=x[2]?0:w[" *"]||0;
if(q&&(!b||q>b[0]||(q===b[0]&&x[1]<b[1])))b=[q,x[1],x]}return b}
function qs(q){var o=[],n,v,i;for(n in q){v=q[n].multiValue||[q[n]];for(i=0;i<v.length;i++)o.push(v[i].value===""?n:n+"="+v[i].value)}return o.length?"?"+o.join("&"):""}
function re(s,t,h){var o={},n;for(n in h)o[n]={value:h[n]};return{statusCode:s,statusDescription:t,headers:o}}
