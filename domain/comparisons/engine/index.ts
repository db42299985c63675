/** The comparison engine: read ./compare.ts first (the rules), ./types.ts for the result. */
export * from './types';
export {
  compareVersions,
  inferTypes,
  checkKeyColumns,
  comparisonType,
  keyRank,
  type SheetTypes,
  type CompareOptions,
} from './compare';
export { stageLines } from './lines';
