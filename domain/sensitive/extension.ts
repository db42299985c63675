/** Sensitive-data detection in the report build: the step, and the findings saved with the report. */
import type { BuildExtension } from '../reports/build';
import { findingColumns, recordFindings } from './findings';
import { sensitiveStep, type SensitiveSection } from './step';

export function sensitiveExtension(): BuildExtension {
  return {
    async prepare() {
      return {
        steps: [sensitiveStep()],
        async onSave(uow, saved) {
          const section = saved.sections.sensitiveData as SensitiveSection | undefined;
          if (!section) return;
          await recordFindings(uow, saved, findingColumns(section.columns));
        },
      };
    },
  };
}
