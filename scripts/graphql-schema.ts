/**
 * Prints the GraphQL schema (api/graphql/schema.ts) to api/graphql/schema.graphql, the committed copy that
 * clients read and test/api/graphqlSchema.test.ts keeps in sync: `npm run graphql:schema` after a change.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { printSchema } from 'graphql';
import { schema } from '../api/graphql/schema';

export const SCHEMA_FILE = path.resolve(__dirname, '../../api/graphql/schema.graphql');

export function printedSchema(): string {
  return `${printSchema(schema)}\n`;
}

if (require.main === module) {
  writeFileSync(SCHEMA_FILE, printedSchema());
  process.stdout.write(`wrote ${SCHEMA_FILE}\n`);
}
