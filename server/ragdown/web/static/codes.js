// The codes an error answer carries beside its message (`{"error": …, "code": …}`) that a client
// branches on (docs/documents.md#write). The server defines them; this page reads them from here only.
export const Code = Object.freeze({
  CHANGED: "changed",
  MANAGED: "managed",
  NOT_MANAGED: "not_managed",
  NOT_CREATED: "not_created",
  READER: "reader",
});
