// The page's routes as links (docs/web.md#the-page): each path segment percent-encoded, since a
// name may hold `#`, `?` or spaces.

const encoded = (path) => path.split("/").map(encodeURIComponent).join("/");

export const docHref = (path, extra = "") => `#/doc/${encoded(path)}${extra}`;

export const editHref = (path) => `#/edit/${encoded(path)}`;

export const folderHref = (name) => `#/folder/${encodeURIComponent(name)}`;

// The folder a document path starts with.
export const folderOf = (path) => path.split("/", 1)[0];
