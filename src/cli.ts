console.log('geo-sync');
