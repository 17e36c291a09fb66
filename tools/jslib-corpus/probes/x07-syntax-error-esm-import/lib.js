import { sleep } from 'k6';
export const a = ;
