// The import direction of mcp-fleet (ARCHITECTURE.md): data flows up the layers below, and
// nothing imports a layer above its own. `npm run check:imports` checks it in CI.
//
// A layer is a list of path patterns under src/. Shared leaf utilities (src/internal/*.ts)
// sit at the bottom; an owner's implementation folder (src/internal/<owner>/) sits with its
// owner.
const layers = [
  ["base", ["^src/(JsonRpc|McpSchema|McpError)\\.ts$", "^src/internal/[^/]+\\.ts$"]],
  ["transport", [
    "^src/(Transport|Stdio|Memory|StreamableHttp|LegacySse|WebSocket|HttpClientUndici)\\.ts$",
    "^src/internal/transport/"
  ]],
  ["peer", ["^src/Peer\\.ts$", "^src/internal/peer/"]],
  ["client", ["^src/McpClient\\.ts$", "^src/internal/mcpClient/"]],
  ["fleet", [
    "^src/(ServerSpec|ServerState|RegistryEvent|Catalog|ServerRegistry)\\.ts$",
    "^src/internal/serverRegistry/"
  ]],
  ["config", ["^src/(FleetConfig|Policy)\\.ts$", "^src/internal/(policy|fleetConfig)/"]],
  ["edge", ["^src/Gateway\\.ts$", "^src/internal/gateway/", "^src/cli/", "^src/testing/", "^src/index\\.ts$"]]
]

const anyOf = (patterns) => patterns.map((pattern) => `(${pattern})`).join("|")

// Each layer may import its own and the ones below, never one above.
const upward = layers.slice(0, -1).map(([name, patterns], index) => ({
  name: `no-upward-import-from-${name}`,
  comment: `the ${name} layer imports a layer above it: data flows one way (ARCHITECTURE.md)`,
  severity: "error",
  from: { path: anyOf(patterns) },
  to: { path: anyOf(layers.slice(index + 1).flatMap(([, above]) => above)), dependencyTypesNot: ["type-only"] }
}))

// An owner's folder under src/internal/ is its implementation: only the owner's own files
// import it (the transport folder is owned by all the transports).
const owners = [
  ["transport", "^src/(Transport|Stdio|Memory|StreamableHttp|LegacySse|WebSocket|HttpClientUndici)\\.ts$"],
  ["peer", "^src/Peer\\.ts$"],
  ["mcpClient", "^src/McpClient\\.ts$"],
  ["serverRegistry", "^src/ServerRegistry\\.ts$"],
  ["policy", "^src/Policy\\.ts$"],
  ["fleetConfig", "^src/FleetConfig\\.ts$"],
  ["gateway", "^src/Gateway\\.ts$"]
]
const foreignInternals = owners.map(([folder, owner]) => ({
  name: `internal-${folder}-is-private`,
  comment: `src/internal/${folder}/ is the implementation of its owner; use the public module instead`,
  severity: "error",
  from: { pathNot: `(${owner})|(^src/internal/${folder}/)|(^test/)` },
  to: { path: `^src/internal/${folder}/` }
}))

module.exports = {
  forbidden: [
    ...upward,
    ...foreignInternals,
    {
      name: "src-stays-in-src",
      comment: "the library never imports tests, benchmarks, examples or scripts",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench|examples|scripts)/" }
    },
    {
      name: "no-circular",
      comment: "a runtime import cycle; a type-only import of a public module by its own implementation is fine",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } }
    },
    {
      name: "no-unresolvable",
      severity: "error",
      from: {},
      to: { couldNotResolve: true }
    }
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { exportsFields: ["exports"], conditionNames: ["import", "require", "node", "default", "types"] }
  }
}
