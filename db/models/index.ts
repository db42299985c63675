export { BaseModel, TenantModel } from './base';
export { Company, type CompanyStatus, type PlanName } from './Company';
export { Person, type Role, type PersonStatus } from './Person';
export { OutboxEvent } from './OutboxEvent';
export { Session } from './Session';
export { ApiKey } from './ApiKey';
