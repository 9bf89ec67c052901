/** Request schemas several resources share: path parameters, queries and the empty body. */
import { z } from 'zod';

/** A route that takes no body still accepts the `null` (or `{}`) the CLI sends on every write. */
export const NoBody = z.union([z.null(), z.strictObject({})]).optional();
