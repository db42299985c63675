/** The analysis engine: read ./types.ts first (the contract the rules and comparison steps build on). */
export * from './types';
export {
  checkEngine,
  openEngine,
  removeStaleWorkFolders,
  STALE_WORK_FOLDER_MS,
  type Engine,
  type EngineSettings,
} from './duckdb';
export {
  loadVersion,
  downloadText,
  fileMissing,
  fileSource,
  tooManyRows,
  ROW_NUMBER_COLUMN,
  LAZY_FIRST_ROW,
} from './load';
export { profileVersion, inferType } from './profile';
export { runAnalysis } from './pipeline';
export { isNullSql, classSql, typedSql, literal, NULL_STRINGS, CLASS_CODES } from './sql';
