/**
 * Which namespaces an environment covers, as `kosli snapshot k8s` decides it: with any exclusion
 * set, every namespace not excluded (by exact name or by any regular expression); else with any
 * inclusion set, the namespaces included (exact name or any regular expression); else all.
 * Regular expressions match anywhere in the name unless anchored, as Go's MatchString does.
 */

/** The namespace selection of one environment. */
export interface NamespaceSelection {
  namespaces: string[];
  namespacesRegex: string[];
  excludeNamespaces: string[];
  excludeNamespacesRegex: string[];
}

/** A compiled selection: test a namespace name, and know which informer scope it needs. */
export interface NamespaceFilter {
  matches(namespace: string): boolean;
  /** The literal namespaces, when those alone are selected; undefined when it needs every namespace. */
  literalNamespaces: string[] | undefined;
}

/** Compiles a selection whose patterns were validated with {@link regexProblem}. */
export function compileNamespaceFilter(s: NamespaceSelection): NamespaceFilter {
  const exclude = new Set(s.excludeNamespaces);
  const excludeRe = s.excludeNamespacesRegex.map((r) => new RegExp(r));
  const include = new Set(s.namespaces);
  const includeRe = s.namespacesRegex.map((r) => new RegExp(r));
  if (exclude.size > 0 || excludeRe.length > 0) {
    return {
      matches: (ns) => !exclude.has(ns) && !excludeRe.some((re) => re.test(ns)),
      literalNamespaces: undefined,
    };
  }
  if (include.size > 0 || includeRe.length > 0) {
    return {
      matches: (ns) => include.has(ns) || includeRe.some((re) => re.test(ns)),
      literalNamespaces: includeRe.length === 0 ? [...include].sort() : undefined,
    };
  }
  return { matches: () => true, literalNamespaces: undefined };
}

/** Why a pattern is not a valid regular expression, or undefined when it is. */
export function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
