export default async () => {
  console.log('async arrow default ran');
};
