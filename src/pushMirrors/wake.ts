/** The in-process signal that push mirrors became due (created, a push recorded, "sync now"); the worker wakes on it. */
export const PUSH_MIRRORS_DUE = 'push-mirrors';
