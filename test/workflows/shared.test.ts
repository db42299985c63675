import { expect } from 'chai';
import { COMPANY_ID, workflowId, workflowIdentity } from '../../workflows/shared';
import { REPORT_WORKFLOW, reportStart } from '../../workflows/definitions/reports';
import { reportWorkflow } from '../../workflows/report';

describe('workflow ids and search attributes', () => {
  it('builds readable, deterministic ids that name the object', () => {
    expect(workflowId('webhook-delivery', 'd1')).to.equal('webhook-delivery:d1');
    expect(workflowId('report', 'c1', 'f1', 'v2')).to.equal('report:c1:f1:v2');
    expect(workflowId('report', 'c1', 'f1', 'v2')).to.equal(workflowId('report', 'c1', 'f1', 'v2'));
  });

  it('refuses parts that would make ids ambiguous', () => {
    expect(() => workflowId('report', 'a:b')).to.throw('invalid workflow id part');
    expect(() => workflowId('report', '')).to.throw('invalid workflow id part');
    expect(() => workflowId('report', 'a b')).to.throw('invalid workflow id part');
  });

  it('sets the CompanyId search attribute and the correlation id memo', () => {
    const identity = workflowIdentity({
      kind: 'report',
      parts: ['f1', 1],
      companyId: 'company-1',
      taskQueue: 'q',
      correlationId: 'req-1',
    });
    expect(identity.workflowId).to.equal('report:f1:1');
    expect(identity.typedSearchAttributes.get(COMPANY_ID)).to.equal('company-1');
    expect(identity.memo).to.deep.equal({ correlationId: 'req-1' });
  });

  it('the report definitions name the report workflow and build its start', () => {
    expect(REPORT_WORKFLOW).to.equal(reportWorkflow.name);
    const input = { companyId: 'c1', fileId: 'f1', fileVersionId: 'v-id', version: 2 };
    const start = reportStart(input, { taskQueue: 'q', correlationId: 'req-2' });
    expect(start).to.deep.include({ workflowId: 'report:f1:v2', taskQueue: 'q', args: [input] });
    expect(start.typedSearchAttributes.get(COMPANY_ID)).to.equal('c1');
    expect(start.memo).to.deep.equal({ correlationId: 'req-2' });
  });
});
