/**
 * The Node side of Host: roots made from local paths, which needs the process's working
 * directory and the platform's path and file-URL rules (`node:path`, `node:url`).
 *
 * @since 0.4.0
 */
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import type * as McpSchema from "./McpSchema.js"

/**
 * A root for a folder or file path (made absolute against the working directory), named
 * after its last segment.
 *
 * @since 0.2.0
 * @category constructors
 */
export const rootOf = (folder: string): McpSchema.Root => {
  const absolute = path.resolve(folder)
  return { uri: pathToFileURL(absolute).href, name: path.basename(absolute) || absolute }
}
