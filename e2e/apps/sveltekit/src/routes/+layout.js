// Prerender every page; write about/index.html (not about.html) so any static server finds it.
export const prerender = true;
export const trailingSlash = 'always';
