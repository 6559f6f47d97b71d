// What the screens share. Nothing here survives a reload: the server holds the data, the session
// cookie the sign-in.
export const state = {
  // The folders from /api/folders; emptied to have the next screen fetch them again.
  folders: [],
  // A folder's documents by its name, fetched on first need; a change deletes the folder's entry.
  docs: new Map(),
  // The folder the side bar shows, whose documents the bar's search searches.
  folder: null,
  // The editor holds changes not yet saved: leaving asks first.
  dirty: false,
  // A call has succeeded since the page loaded: a 401 now means the session ended.
  signedIn: false,
  // The URL fragment on screen, restored when leaving an unsaved edit is called off.
  shownHash: location.hash,
};
