export { BaseModel, TenantModel } from './base';
export { Company, type CompanyStatus, type PlanName } from './Company';
export { Person, type Role, type PersonStatus } from './Person';
export { OutboxEvent } from './OutboxEvent';
export { File, type Visibility } from './File';
export { FileVersion, type FileFormat } from './FileVersion';
export { Dataset } from './Dataset';
export { Report } from './Report';
