/**
 * The version `mcp-fleet --version` prints, kept apart so that printing it loads nothing else.
 *
 * @since 0.1.0
 */

/**
 * The CLI's version.
 *
 * @since 0.1.0
 */
export const VERSION = "0.1.0"
