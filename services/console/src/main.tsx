/** The console's entry: styles, providers and the router. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { AppProvider } from './app/provider';
import { AppRouter } from './app/router';
import { applyTheme } from './lib/preferences';
import './styles.css';

const root = document.getElementById('root');
if (!root) {
  throw new Error('index.html has no #root');
}
applyTheme();
createRoot(root).render(
  <StrictMode>
    <AppProvider>
      <AppRouter />
    </AppProvider>
  </StrictMode>,
);
