/** Who may see a repository: anyone, any signed-in user, or the members of its organization. */
export type Visibility = 'public' | 'internal' | 'private';
export const VISIBILITIES: Visibility[] = ['public', 'internal', 'private'];
