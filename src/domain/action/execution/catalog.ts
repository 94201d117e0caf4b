/** Functions an execution can hook into, as ListAvailableExecutionFunctions names them. */
export const EXECUTION_FUNCTIONS = ["preaccesstoken", "preuserinfo"] as const;

/** What request and response conditions may name: what this server really serves. */
export interface ExecutionCatalog {
  methods: ReadonlySet<string>;
  services: ReadonlySet<string>;
  functions: ReadonlySet<string>;
}
