// The codes an error answer carries beside its message (`{"error": …, "code": …}`) that a client
// branches on (docs/documents.md#write). Made from ragdown/errors.py's Code by
// `python -m ragdown.codes_js`: change them there, never here.
export const Code = Object.freeze({
  CHANGED: "changed",
  MANAGED: "managed",
  NOT_MANAGED: "not_managed",
  NOT_CREATED: "not_created",
  READER: "reader",
  OVERLOADED: "overloaded",
});
