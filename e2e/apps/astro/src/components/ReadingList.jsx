import { useMemo, useState } from 'preact/hooks';
import './ReadingList.css';

const HEADLINE = 'My reading list'; // @release2:headline

function summary(done, total, pagesLeft) {
  if (total === 0) return 'Nothing to read.';
  if (done === total) return 'All done. Time for a new list!'; // @release3:summary
  return `${done} of ${total} read, ${pagesLeft.toLocaleString('en-US')} pages to go`;
}

export default function ReadingList({ books }) {
  const [done, setDone] = useState(() => new Set());
  const [tag, setTag] = useState('all');

  const tags = useMemo(() => ['all', ...new Set(books.map((b) => b.tag))], [books]);
  const shown = books.filter((b) => tag === 'all' || b.tag === tag); // @release2:filter
  const pagesLeft = books.filter((b) => !done.has(b.id)).reduce((n, b) => n + b.pages, 0);
  const percent = books.length ? Math.round((done.size / books.length) * 100) : 0;

  function toggle(id) {
    setDone((prev) => {
      const next = new Set(prev);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }

  return (
    <section class="reading">
      <h2 data-e2e-release>{HEADLINE}</h2>
      <div class="reading-toolbar">
        {tags.map((t) => (
          <button type="button" aria-pressed={String(t === tag)} onClick={() => setTag(t)} data-e2e-click={t === 'web' ? 'tag' : undefined}>
            {t}
          </button>
        ))}
      </div>
      <ul>
        {shown.map((b) => (
          <li key={b.id} class={done.has(b.id) ? 'done' : ''}>
            <input type="checkbox" checked={done.has(b.id)} onChange={() => toggle(b.id)} />
            <span class="title">{b.title}</span>
            <span class="muted">{b.author} · {b.pages} p.</span>
          </li>
        ))}
      </ul>
      <div class="progress" role="progressbar" aria-valuenow={percent}><span style={{ width: `${percent}%` }} /></div>
      <p class="muted">{summary(done.size, books.length, pagesLeft)}</p>
    </section>
  );
}
