/**
 * The CreateUser scenario of a schema user (issue 38: "CreateUser of a schema user with a
 * 20-field schema as a ratio to ajv validating the same data plus the same SQL", aim ≥ 0.7):
 * the schema, a user's data, and how both sides validate it. The 20 fields mix the keywords
 * real schemas use: lengths, a pattern, formats (email, date, uri), ranges, an enum, a nested
 * object with its own required fields, an array of unique items; one field is searchable and
 * one readable by owners only, so that the service indexes and checks permissions as it would.
 */
import { newAjv } from "../src/domain/user-schema/json-schema.js";

export const EMPLOYEE_SCHEMA = {
  type: "object",
  properties: {
    givenName: { type: "string", minLength: 1, maxLength: 100 },
    familyName: { type: "string", minLength: 1, maxLength: 100 },
    email: { type: "string", format: "email" },
    phone: { type: "string", pattern: "^\\+[1-9][0-9]{6,14}$" },
    employeeNumber: { type: "integer", minimum: 1, maximum: 99_999_999 },
    department: { type: "string", "urn:platform:searchable": true },
    title: { type: "string", maxLength: 200 },
    level: { type: "string", enum: ["junior", "mid", "senior", "principal"] },
    startDate: { type: "string", format: "date" },
    salary: { type: "number", minimum: 0, "urn:platform:permission": { owner: "rw" } },
    fullTime: { type: "boolean" },
    manager: { type: "string", maxLength: 200 },
    homepage: { type: "string", format: "uri" },
    costCenter: { type: "string", pattern: "^CC-[0-9]{4}$" },
    office: {
      type: "object",
      properties: {
        city: { type: "string", minLength: 1 },
        country: { type: "string", pattern: "^[A-Z]{2}$" },
        building: { type: "string" },
        floor: { type: "integer", minimum: -5, maximum: 200 },
      },
      required: ["city", "country"],
      additionalProperties: false,
    },
    skills: { type: "array", items: { type: "string", maxLength: 50 }, uniqueItems: true, maxItems: 20 },
  },
  required: ["givenName", "familyName", "email", "employeeNumber", "department"],
  additionalProperties: false,
} as const;

const LEVELS = ["junior", "mid", "senior", "principal"];

/** A valid user's data; `n` varies it so that no two are the same. */
export function employeeData(n: number) {
  return {
    givenName: "Grace",
    familyName: `Hopper ${n}`,
    email: `grace.${n}@example.com`,
    phone: `+4179${String(1_000_000 + (n % 9_000_000))}`,
    employeeNumber: 1 + (n % 99_999_998),
    department: `dept-${n % 20}`,
    title: "Rear admiral",
    level: LEVELS[n % LEVELS.length]!,
    startDate: "2024-05-01",
    salary: 100_000 + (n % 1000),
    fullTime: n % 2 === 0,
    manager: "Howard Aiken",
    homepage: `https://example.com/people/${n}`,
    costCenter: `CC-${String(n % 10_000).padStart(4, "0")}`,
    office: { city: "Arlington", country: "US", building: "Navy Annex", floor: n % 10 },
    skills: ["cobol", "compilers", `topic-${n % 7}`],
  };
}

/** The baseline's validator: Ajv as the service builds it (options, formats, our keywords), compiled once. */
export function baselineValidator(schema: object) {
  return newAjv().compile(schema);
}
