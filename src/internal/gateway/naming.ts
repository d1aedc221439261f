/**
 * The names the gateway's clients see for tools and prompts. `qualified`: every one as
 * `mcp__<server>__<name>`. `plain`: a server's own name when no other tool (or prompt) of
 * the fleet has it, the qualified name for every one that shares it — so a name never moves
 * from one server to another: when a second server with the same name joins, both become
 * qualified (the clients get list_changed) and a call by the plain name is refused as
 * unknown. Qualified names are always accepted, listed or not, and read as `Catalog.serverOf`
 * reads them (see the naming rule in Catalog.ts); a server's own name that reads as a
 * qualified one (`mcp__fs__read` on server `evil`) is never given as a plain name, so it can
 * never stand for another server's tool; names the gateway serves itself (the management
 * tools) are never given to a server's tool.
 *
 * @internal
 */
import * as Catalog from "../../Catalog.js"

/** How the gateway names tools and prompts to its clients. */
export type Naming = "qualified" | "plain"

/** A catalog as one client sees it: its entries under the names that client uses. */
export interface View {
  readonly catalog: Catalog.Catalog
  /** Tools by the name the client sees, in list order. */
  readonly tools: ReadonlyMap<string, Catalog.ToolEntry>
  /** Prompts by the name the client sees, in list order. */
  readonly prompts: ReadonlyMap<string, Catalog.PromptEntry>
}

/** Which entry a name the client gave means: the listed name first, then the qualified one. */
export const lookup = <A>(listed: ReadonlyMap<string, A>, qualified: ReadonlyMap<string, A>, name: string) =>
  listed.get(name) ?? qualified.get(name)

/** Which tool a name the client gave means: the listed name first, then `Catalog.findTool`. */
export const lookupTool = (view: View, name: string): Catalog.ToolEntry | undefined =>
  view.tools.get(name) ?? Catalog.findTool(view.catalog, name)

// The name of each entry: its original when no other entry of the fleet has that original,
// it does not read as a qualified name (so qualified names stay unambiguous and never move
// to another server) and is not reserved, else the qualified name.
const plainNames = <A extends { readonly name: string }>(
  fleet: ReadonlyArray<A>,
  original: (entry: A) => string,
  reserved: (name: string) => boolean
): Map<string, string> => {
  const count = new Map<string, number>()
  for (const entry of fleet) count.set(original(entry), (count.get(original(entry)) ?? 0) + 1)
  const names = new Map<string, string>()
  for (const entry of fleet) {
    const own = original(entry)
    const plain = count.get(own) === 1 && (own === entry.name || Catalog.serverOf(own) === undefined) &&
      !reserved(own)
    names.set(entry.name, plain ? own : entry.name)
  }
  return names
}

const under = <A extends { readonly name: string }>(
  entries: ReadonlyArray<A>,
  names: ReadonlyMap<string, string> | undefined
): Map<string, A> => new Map(entries.map((entry) => [names?.get(entry.name) ?? entry.name, entry]))

/**
 * The view of `visible` (the catalog a client may see) under `naming`; `fleet` is the
 * whole catalog, which decides which names collide, so every client sees the same names
 * whatever the policy hides from it; `reserved` tool names are the gateway's own.
 */
export const view = (
  naming: Naming,
  fleet: Catalog.Catalog,
  visible: Catalog.Catalog,
  reserved: (name: string) => boolean = () => false
): View => {
  if (naming === "qualified") {
    return { catalog: visible, tools: visible.toolsByName, prompts: visible.promptsByName }
  }
  return {
    catalog: visible,
    tools: under(visible.tools, plainNames(fleet.tools, (entry) => entry.tool.name, reserved)),
    prompts: under(visible.prompts, plainNames(fleet.prompts, (entry) => entry.prompt.name, () => false))
  }
}
