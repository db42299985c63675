import { expect } from 'chai';
import { parseMentions } from '../../../domain/comments/mentions';

describe('mentions in a comment (the documented syntax)', () => {
  it('finds @<personId> and @<email>, case-insensitive, each once, without trailing punctuation', () => {
    const id = '3F0C2A9E-1B2C-4D3E-8F40-5A6B7C8D9E0F';
    const text = `hi @${id}, see @Ana.Smith@Example.com. and @ana.smith@example.com; also @bob@x.org!`;
    expect(parseMentions(text)).to.deep.equal({
      personIds: [id.toLowerCase()],
      emails: ['ana.smith@example.com', 'bob@x.org'],
    });
  });

  it('ignores an e-mail address written without @ before it, a bare @ and a broken id', () => {
    expect(parseMentions('mail ana@example.com or @ alone or @3f0c2a9e-1b2c')).to.deep.equal({
      personIds: [],
      emails: [],
    });
  });
});
