/**
 * Regular expressions a tenant writes (policy `matches()`, attestation `name_regex`) run with
 * RE2 semantics: matching time is linear in the subject, so no pattern can backtrack for hours.
 * Back-references and look-around have no linear-time form and are refused when the pattern is
 * saved or sent, never discovered while evaluating.
 */
import { RE2JS } from 're2js';

/** The longest pattern accepted. */
export const MAX_USER_PATTERN_LENGTH = 512;
/**
 * The largest compiled program accepted. Matching costs at most (program size x subject length)
 * steps; ordinary patterns compile to well under 100, `(.*){1000}` to 4,000.
 */
export const MAX_USER_PATTERN_PROGRAM = 1000;

/** A compiled pattern; `test` finds a match anywhere in the subject, as `RegExp.prototype.test` does. */
export interface UserPattern {
  readonly source: string;
  readonly test: (subject: string) => boolean;
}

/** Why a pattern was refused, in words for an error message. */
export class UserPatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserPatternError';
  }
}

/** Compiles a tenant's pattern with RE2 semantics; throws UserPatternError when RE2 cannot run it or it is too large. */
export function compileUserPattern(source: string): UserPattern {
  if (source.length > MAX_USER_PATTERN_LENGTH) {
    throw new UserPatternError(`the pattern is longer than ${MAX_USER_PATTERN_LENGTH} characters`);
  }
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new UserPatternError(
      `${message} (patterns use RE2 syntax: no back-references or look-around)`.replace(
        /^error parsing regexp: /,
        '',
      ),
    );
  }
  if (re.programSize() > MAX_USER_PATTERN_PROGRAM) {
    throw new UserPatternError(
      `the pattern is too complex (compiled size ${re.programSize()}, at most ${MAX_USER_PATTERN_PROGRAM})`,
    );
  }
  return { source, test: (subject) => re.test(subject) };
}

/** Like compileUserPattern, but answers null for a pattern that cannot run (for patterns read from data). */
export function tryCompileUserPattern(source: string): UserPattern | null {
  try {
    return compileUserPattern(source);
  } catch (err) {
    if (err instanceof UserPatternError) {
      return null;
    }
    throw err;
  }
}
